import ShareCore

// RFC 4585 §6.2.1 Generic NACK (PT=205 RTPFB, FMT=1)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|  FMT=1  |    PT=205     |          length               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of packet sender                        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of media source                         |
// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// |            PID                |             BLP               |  FCI entry,
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+  one or more
//
// PID: a lost packet's sequence number. BLP: bit i (least significant first) set means packet
// PID + i + 1 (mod 2^16) is lost too.

/// A receiver lists the RTP packets of `mediaSSRC` it has not received.
public struct GenericNACK: Hashable, Sendable {
    public static let packetType = RTCPPacketType.transportFeedback
    public static let format = RTCPFeedbackFormat.genericNACK

    /// One FCI entry: a lost packet and a bitmask of up to 16 more after it.
    public struct Entry: Hashable, Sendable {
        public var packetID: UInt16
        public var lostBitmask: UInt16

        public init(packetID: UInt16, lostBitmask: UInt16 = 0) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }

        /// The sequence numbers this entry names, in order, wrapping past 65535.
        public var sequenceNumbers: [UInt16] {
            var numbers = [packetID]
            for bit in 0..<16 where lostBitmask & (1 << bit) != 0 {
                numbers.append(packetID &+ UInt16(bit + 1))
            }
            return numbers
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Packs lost sequence numbers into entries. Numbers are taken in the order given (oldest
    /// first, wrapping past 65535 as RTP does); each one within 16 after the current entry's PID
    /// joins its bitmask, any other starts a new entry. Repeats are dropped.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lostSequenceNumbers: [UInt16]) {
        var entries: [Entry] = []
        for number in lostSequenceNumbers {
            if let last = entries.last {
                let distance = number &- last.packetID
                if distance == 0 { continue }
                if distance <= 16 {
                    entries[entries.count - 1].lostBitmask |= 1 << (distance - 1)
                    continue
                }
            }
            entries.append(Entry(packetID: number))
        }
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, entries: entries)
    }

    /// Every sequence number the packet names, in entry order.
    public var lostSequenceNumbers: [UInt16] { entries.flatMap(\.sequenceNumbers) }

    /// Parses a buffer holding exactly one generic NACK.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> GenericNACK {
        try parse(RTCPFrame.single(bytes, packetType: packetType, format: format, name: "generic NACK"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> GenericNACK {
        var reader = frame.bodyReader
        let ssrcs = try reader.readFeedbackSSRCs("rtcp: NACK")
        guard reader.remaining % 4 == 0 else {
            throw .invalid(
                what: "rtcp: NACK", reason: "\(reader.remaining) FCI bytes is not a whole number of 4-byte entries")
        }
        var entries: [Entry] = []
        entries.reserveCapacity(reader.remaining / 4)
        while !reader.isAtEnd {
            let pid = try reader.readUInt16("rtcp: NACK PID")
            let blp = try reader.readUInt16("rtcp: NACK BLP")
            entries.append(Entry(packetID: pid, lostBitmask: blp))
        }
        return GenericNACK(senderSSRC: ssrcs.sender, mediaSSRC: ssrcs.media, entries: entries)
    }

    /// The packet on the wire; throws when the entries overflow the length field.
    public func serialize() throws(WireError) -> [UInt8] {
        try makeRTCPPacket(count: Int(Self.format), packetType: Self.packetType, name: "generic NACK") { writer in
            writer.write(senderSSRC)
            writer.write(mediaSSRC)
            for entry in entries {
                writer.write(entry.packetID)
                writer.write(entry.lostBitmask)
            }
        }
    }
}
