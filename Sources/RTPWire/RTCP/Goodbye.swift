import ShareCore

// RFC 3550 §6.6 BYE: Goodbye RTCP Packet (PT=203)
//
//        0                   1                   2                   3
//        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//       |V=2|P|    SC   |   PT=BYE=203  |             length            |
//       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//       |                           SSRC/CSRC                           |
//       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//       :                              ...                              :
//       +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// (opt) |     length    |               reason for leaving            ...
//       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The reason is padded with zero bytes to a 32-bit boundary.

/// A goodbye: these sources are leaving, optionally with a reason.
public struct Goodbye: Hashable, Sendable {
    public static let packetType = RTCPPacketType.goodbye

    /// At most 31.
    public var sources: [UInt32]
    /// Up to 255 bytes of UTF-8 text, or nil for no reason.
    public var reason: [UInt8]?

    public init(sources: [UInt32], reason: [UInt8]? = nil) {
        self.sources = sources
        self.reason = reason
    }

    public init(sources: [UInt32], reasonText: String) {
        self.init(sources: sources, reason: Array(reasonText.utf8))
    }

    /// The reason read as UTF-8, invalid sequences replaced.
    public var reasonText: String? { reason.map { String(decoding: $0, as: UTF8.self) } }

    /// Parses a buffer holding exactly one BYE.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> Goodbye {
        try parse(RTCPFrame.single(bytes, packetType: packetType, name: "goodbye"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> Goodbye {
        var reader = frame.bodyReader
        var sources: [UInt32] = []
        for _ in 0..<frame.header.count { sources.append(try reader.readUInt32("rtcp: BYE SSRC list")) }
        var reason: [UInt8]?
        if !reader.isAtEnd {
            let length = Int(try reader.readUInt8("rtcp: BYE reason length"))
            reason = Array(try reader.readBytes(length, "rtcp: BYE reason"))
        }
        return Goodbye(sources: sources, reason: reason)
    }

    /// The packet on the wire; throws for more than 31 sources or a reason over 255 bytes.
    public func serialize() throws(WireError) -> [UInt8] {
        try makeRTCPPacket(count: sources.count, packetType: Self.packetType, name: "goodbye") {
            (writer: inout ByteWriter) throws(WireError) in
            for source in sources { writer.write(source) }
            if let reason {
                guard reason.count <= 255 else {
                    throw .invalid(what: "rtcp: BYE reason", reason: "\(reason.count) bytes, at most 255 fit")
                }
                writer.write(UInt8(reason.count))
                writer.write(contentsOf: reason)
            }
        }
    }
}
