import ShareCore

// RFC 3550 §6.4.1 The common RTCP header
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|  RC/FMT |      PT       |             length            |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// length: the packet's size in 32-bit words minus one, header and padding included. With P=1 the
// last byte counts the padding bytes, itself included.

/// The first word of every RTCP packet.
public struct RTCPHeader: Hashable, Sendable {
    public static let size = 4

    /// Whether the packet ends in padding (P bit).
    public var padding: Bool
    /// 5 bits: the report or source count, or the feedback message type (FMT).
    public var count: UInt8
    public var packetType: UInt8
    /// The packet's size in 32-bit words minus one.
    public var length: UInt16

    public init(padding: Bool = false, count: UInt8, packetType: UInt8, length: UInt16) {
        self.padding = padding
        self.count = count
        self.packetType = packetType
        self.length = length
    }

    /// The whole packet's size in bytes, this header included.
    public var packetSize: Int { (Int(length) + 1) * 4 }
}

/// RTCP packet type numbers.
public enum RTCPPacketType {
    public static let senderReport: UInt8 = 200
    public static let receiverReport: UInt8 = 201
    public static let sourceDescription: UInt8 = 202
    public static let goodbye: UInt8 = 203
    public static let applicationDefined: UInt8 = 204
    /// Transport-layer feedback, RFC 4585 §6.2.
    public static let transportFeedback: UInt8 = 205
    /// Payload-specific feedback, RFC 4585 §6.3.
    public static let payloadSpecificFeedback: UInt8 = 206
    public static let extendedReport: UInt8 = 207
}

/// One packet cut out of a buffer: its header and where its body lies, padding excluded.
struct RTCPFrame {
    var header: RTCPHeader
    var bytes: [UInt8]
    var body: Range<Int>

    var bodyReader: ByteReader { ByteReader(bytes, range: body) }

    /// Reads the packet starting at `offset`. `index` (1-based) names it in errors.
    static func read(_ bytes: [UInt8], at offset: Int, index: Int) throws(WireError) -> RTCPFrame {
        let available = bytes.count - offset
        let name = index == 1 ? "rtcp: packet" : "rtcp: packet \(index)"
        guard available >= RTCPHeader.size else {
            throw .truncated(what: name, got: available, need: RTCPHeader.size)
        }
        let first = bytes[offset]
        let version = first >> 6
        guard version == 2 else {
            throw .invalid(what: "\(name) version", reason: "expected 2, got \(version)")
        }
        let header = RTCPHeader(
            padding: first & 0x20 != 0, count: first & 0x1F, packetType: bytes[offset + 1],
            length: UInt16(bytes[offset + 2]) << 8 | UInt16(bytes[offset + 3]))
        let size = header.packetSize
        guard size <= available else {
            throw .truncated(what: "\(name) (type \(header.packetType))", got: available, need: size)
        }
        var bodyEnd = offset + size
        if header.padding {
            let count = Int(bytes[bodyEnd - 1])
            guard count > 0 else {
                throw .invalid(what: "\(name) padding", reason: "padding bit set but padding count is 0")
            }
            guard count <= size - RTCPHeader.size else {
                throw .invalid(
                    what: "\(name) padding",
                    reason: "padding count \(count) is longer than the \(size - RTCPHeader.size)-byte body")
            }
            bodyEnd -= count
        }
        return RTCPFrame(header: header, bytes: bytes, body: offset + RTCPHeader.size..<bodyEnd)
    }

    /// Reads a buffer holding exactly one packet of type `packetType`.
    static func single(_ bytes: [UInt8], packetType: UInt8, name: String) throws(WireError) -> RTCPFrame {
        let frame = try read(bytes, at: 0, index: 1)
        guard frame.header.packetType == packetType else {
            throw .invalid(
                what: "rtcp: \(name)", reason: "packet type \(frame.header.packetType), expected \(packetType)")
        }
        guard frame.header.packetSize == bytes.count else {
            throw .invalid(
                what: "rtcp: \(name)",
                reason: "length field says \(frame.header.packetSize) bytes but the buffer holds \(bytes.count)")
        }
        return frame
    }

    /// Reads a buffer holding exactly one feedback packet of type `packetType` and format `format`.
    static func single(
        _ bytes: [UInt8], packetType: UInt8, format: UInt8, name: String
    ) throws(WireError) -> RTCPFrame {
        let frame = try single(bytes, packetType: packetType, name: name)
        guard frame.header.count == format else {
            throw .invalid(
                what: "rtcp: \(name)", reason: "feedback message type \(frame.header.count), expected \(format)")
        }
        return frame
    }
}

/// Builds one RTCP packet: the header is written with the length of what `body` writes, which is
/// zero-padded to a 32-bit boundary (never with the P bit).
func makeRTCPPacket(
    count: Int, packetType: UInt8, name: String, body: (inout ByteWriter) throws(WireError) -> Void
) throws(WireError) -> [UInt8] {
    guard (0...31).contains(count) else {
        throw .invalid(what: "rtcp: \(name)", reason: "count \(count) does not fit 5 bits (at most 31)")
    }
    var writer = ByteWriter()
    writer.write(UInt8(0x80 | count))
    writer.write(packetType)
    writer.write(UInt16(0))
    try body(&writer)
    writer.writeZeros((4 - writer.count % 4) % 4)
    let words = writer.count / 4 - 1
    guard words <= Int(UInt16.max) else {
        throw .invalid(what: "rtcp: \(name)", reason: "\(writer.count) bytes do not fit the 16-bit length field")
    }
    writer.patch(UInt16(words), at: 2)
    return writer.bytes
}
