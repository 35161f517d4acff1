import ShareCore

// draft-alvestrand-rmcat-remb-03 §2.2 REMB (PT=206 PSFB, FMT=15 application layer feedback)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P| FMT=15  |   PT=206      |             length            |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of packet sender                        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of media source (0)                     |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |  Unique identifier 'R' 'E' 'M' 'B'                            |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |  Num SSRC     | BR Exp    |  BR Mantissa                      |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |   SSRC feedback                                               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |  ...                                                          |
//
// Bitrate in bits per second = mantissa (18 bits) × 2^exp (6 bits).

/// A receiver's estimate of the total bitrate it can take for the listed streams.
public struct ReceiverEstimatedMaxBitrate: Hashable, Sendable {
    public static let packetType = RTCPPacketType.payloadSpecificFeedback
    public static let format = RTCPFeedbackFormat.applicationLayerFeedback
    /// "REMB", the application layer feedback identifier.
    public static let identifier: [UInt8] = [0x52, 0x45, 0x4D, 0x42]

    public var senderSSRC: UInt32
    /// Unused by REMB; 0.
    public var mediaSSRC: UInt32
    /// Bits per second. On the wire it keeps 18 significant bits, rounded down.
    public var bitrate: UInt64
    /// The media streams the estimate covers; at most 255.
    public var ssrcs: [UInt32]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// Whether an application-layer feedback body (after the two SSRCs) starts with "REMB".
    static func isREMB(_ frame: RTCPFrame) -> Bool {
        let start = frame.body.lowerBound + 8
        return frame.body.count >= 12 && Array(frame.bytes[start..<start + 4]) == identifier
    }

    /// Parses a buffer holding exactly one REMB.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> ReceiverEstimatedMaxBitrate {
        try parse(RTCPFrame.single(bytes, packetType: packetType, format: format, name: "REMB"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> ReceiverEstimatedMaxBitrate {
        var reader = frame.bodyReader
        let ssrcs = try reader.readFeedbackSSRCs("rtcp: REMB")
        let identifier = try reader.readBytes(4, "rtcp: REMB identifier")
        guard identifier.elementsEqual(Self.identifier) else {
            throw .invalid(what: "rtcp: REMB", reason: "application feedback identifier is not \"REMB\"")
        }
        let count = Int(try reader.readUInt8("rtcp: REMB SSRC count"))
        let encoded = try reader.readUInt24("rtcp: REMB bitrate")
        let exponent = UInt64(encoded >> 18)
        let mantissa = UInt64(encoded & 0x3_FFFF)
        guard mantissa == 0 || exponent <= UInt64(mantissa.leadingZeroBitCount) else {
            throw .invalid(what: "rtcp: REMB bitrate", reason: "\(mantissa) × 2^\(exponent) overflows 64 bits")
        }
        guard reader.remaining >= count * 4 else {
            throw .truncated(what: "rtcp: REMB with \(count) SSRCs", got: reader.remaining, need: count * 4)
        }
        var list: [UInt32] = []
        for _ in 0..<count { list.append(try reader.readUInt32("rtcp: REMB SSRC")) }
        return ReceiverEstimatedMaxBitrate(
            senderSSRC: ssrcs.sender, mediaSSRC: ssrcs.media, bitrate: mantissa << exponent, ssrcs: list)
    }

    /// The packet on the wire; throws for more than 255 SSRCs.
    public func serialize() throws(WireError) -> [UInt8] {
        guard ssrcs.count <= 255 else {
            throw .invalid(what: "rtcp: REMB", reason: "\(ssrcs.count) SSRCs, at most 255 fit")
        }
        // The smallest exponent that brings the bitrate under 2^18.
        let exponent = max(0, 64 - bitrate.leadingZeroBitCount - 18)
        let mantissa = bitrate >> UInt64(exponent)
        return try makeRTCPPacket(count: Int(Self.format), packetType: Self.packetType, name: "REMB") { writer in
            writer.write(senderSSRC)
            writer.write(mediaSSRC)
            writer.write(contentsOf: Self.identifier)
            writer.write(UInt8(ssrcs.count))
            writer.writeUInt24(UInt32(exponent) << 18 | UInt32(truncatingIfNeeded: mantissa))
            for ssrc in ssrcs { writer.write(ssrc) }
        }
    }
}
