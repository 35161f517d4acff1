import ShareCore

// RFC 5104 §4.3.1 Full Intra Request (PT=206 PSFB, FMT=4)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|  FMT=4  |    PT=206     |          length               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of packet sender                        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |             SSRC of media source (unused, 0)                  |
// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// |                              SSRC                             |  FCI entry,
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+  one or more
// | Seq nr.       |    Reserved (0)                               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The sequence number grows by one (mod 256) for each new request; a repeat keeps it.

/// A request for a decoder refresh point (keyframe) from each listed media sender.
public struct FullIntraRequest: Hashable, Sendable {
    public static let packetType = RTCPPacketType.payloadSpecificFeedback
    public static let format = RTCPFeedbackFormat.fullIntraRequest

    /// One FCI entry: which sender, and the request's command sequence number.
    public struct Entry: Hashable, Sendable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8

        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    /// Unused by FIR; RFC 5104 asks for 0.
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Parses a buffer holding exactly one FIR.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> FullIntraRequest {
        try parse(RTCPFrame.single(bytes, packetType: packetType, format: format, name: "full intra request"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> FullIntraRequest {
        var reader = frame.bodyReader
        let ssrcs = try reader.readFeedbackSSRCs("rtcp: FIR")
        guard reader.remaining % 8 == 0 else {
            throw .invalid(
                what: "rtcp: FIR", reason: "\(reader.remaining) FCI bytes is not a whole number of 8-byte entries")
        }
        var entries: [Entry] = []
        while !reader.isAtEnd {
            let ssrc = try reader.readUInt32("rtcp: FIR entry")
            let sequenceNumber = try reader.readUInt8("rtcp: FIR entry")
            try reader.skip(3, "rtcp: FIR entry")
            entries.append(Entry(ssrc: ssrc, sequenceNumber: sequenceNumber))
        }
        return FullIntraRequest(senderSSRC: ssrcs.sender, mediaSSRC: ssrcs.media, entries: entries)
    }

    /// The packet on the wire; throws when the entries overflow the length field.
    public func serialize() throws(WireError) -> [UInt8] {
        try makeRTCPPacket(count: Int(Self.format), packetType: Self.packetType, name: "full intra request") { writer in
            writer.write(senderSSRC)
            writer.write(mediaSSRC)
            for entry in entries {
                writer.write(entry.ssrc)
                writer.write(entry.sequenceNumber)
                writer.writeZeros(3)
            }
        }
    }
}
