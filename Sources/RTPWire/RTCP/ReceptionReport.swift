import ShareCore

// RFC 3550 §6.4.1 Report block (24 bytes), in SR and RR packets
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// |                 SSRC_1 (SSRC of first source)                 |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// | fraction lost |       cumulative number of packets lost       |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |           extended highest sequence number received           |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                      interarrival jitter                      |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                         last SR (LSR)                         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                   delay since last SR (DLSR)                  |
// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+

/// What a receiver reports about one source.
public struct ReceptionReport: Hashable, Sendable {
    public static let size = 24
    /// The 24-bit signed range of the cumulative-lost field.
    public static let cumulativeLostRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    public var ssrc: UInt32
    /// Lost fraction since the last report, in 1/256 units.
    public var fractionLost: UInt8
    /// Packets lost since reception began; negative when duplicates outnumber losses. Clamped to
    /// the 24-bit range when serialized, as RFC 3550 §6.4.1 asks.
    public var cumulativeLost: Int32
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32
    /// The middle 32 bits of the last SR's NTP timestamp from this source; 0 if none.
    public var lastSenderReport: UInt32
    /// Delay since that SR in 1/65536 s; 0 if none.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, extendedHighestSequenceNumber: UInt32,
        jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    static func read(from reader: inout ByteReader) throws(WireError) -> ReceptionReport {
        let ssrc = try reader.readUInt32("rtcp: report block")
        let lost = try reader.readUInt32("rtcp: report block")
        let highest = try reader.readUInt32("rtcp: report block")
        let jitter = try reader.readUInt32("rtcp: report block")
        let lsr = try reader.readUInt32("rtcp: report block")
        let dlsr = try reader.readUInt32("rtcp: report block")
        // Sign-extend the 24-bit cumulative count: shift it to the top, then arithmetic-shift back.
        let cumulative = (Int32(bitPattern: lost << 8)) >> 8
        return ReceptionReport(
            ssrc: ssrc, fractionLost: UInt8(truncatingIfNeeded: lost >> 24), cumulativeLost: cumulative,
            extendedHighestSequenceNumber: highest, jitter: jitter, lastSenderReport: lsr,
            delaySinceLastSenderReport: dlsr)
    }

    func write(to writer: inout ByteWriter) {
        let clamped = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        writer.write(ssrc)
        writer.write(UInt32(fractionLost) << 24 | UInt32(bitPattern: clamped) & 0xFF_FFFF)
        writer.write(extendedHighestSequenceNumber)
        writer.write(jitter)
        writer.write(lastSenderReport)
        writer.write(delaySinceLastSenderReport)
    }

    /// Reads `count` report blocks, naming the packet in the error when they do not fit.
    static func readBlocks(_ count: Int, from reader: inout ByteReader, packet: String) throws(WireError)
        -> [ReceptionReport]
    {
        guard reader.remaining >= count * size else {
            throw .truncated(
                what: "rtcp: \(packet) with \(count) report blocks", got: reader.remaining, need: count * size)
        }
        var blocks: [ReceptionReport] = []
        blocks.reserveCapacity(count)
        for _ in 0..<count { blocks.append(try read(from: &reader)) }
        return blocks
    }
}
