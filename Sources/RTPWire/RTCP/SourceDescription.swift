import ShareCore

// RFC 3550 §6.5 SDES: Source Description RTCP Packet (PT=202)
//
//         0                   1                   2                   3
//         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// header |V=2|P|    SC   |  PT=SDES=202  |             length            |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// chunk  |                          SSRC/CSRC_1                          |
//   1    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                           SDES items                          |
//        |                              ...                              |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// chunk  |                          SSRC/CSRC_2                          |
//   2    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                           SDES items                          |
//        |                              ...                              |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//
// An item is | type | length | text (length bytes) |. A chunk's item list ends with one or more
// null bytes (the first read as item type 0, END), enough to reach the next 32-bit boundary.

/// A source description: for each source, items such as its CNAME.
public struct SourceDescription: Hashable, Sendable {
    public static let packetType = RTCPPacketType.sourceDescription

    /// The items describing one source (SSRC or CSRC).
    public struct Chunk: Hashable, Sendable {
        public var source: UInt32
        public var items: [Item]

        public init(source: UInt32, items: [Item]) {
            self.source = source
            self.items = items
        }
    }

    /// One SDES item: its type and up to 255 bytes of (UTF-8) text.
    public struct Item: Hashable, Sendable {
        public var type: ItemType
        public var value: [UInt8]

        public init(type: ItemType, value: [UInt8]) {
            self.type = type
            self.value = value
        }

        public init(type: ItemType, text: String) {
            self.init(type: type, value: Array(text.utf8))
        }

        /// The value read as UTF-8, invalid sequences replaced.
        public var text: String { String(decoding: value, as: UTF8.self) }
    }

    /// SDES item types, RFC 3550 §6.5.1–§6.5.8.
    public struct ItemType: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let cname = ItemType(rawValue: 1)
        public static let name = ItemType(rawValue: 2)
        public static let email = ItemType(rawValue: 3)
        public static let phone = ItemType(rawValue: 4)
        public static let location = ItemType(rawValue: 5)
        public static let tool = ItemType(rawValue: 6)
        public static let note = ItemType(rawValue: 7)
        public static let priv = ItemType(rawValue: 8)
    }

    /// At most 31.
    public var chunks: [Chunk]

    public init(chunks: [Chunk]) { self.chunks = chunks }

    /// One source with one CNAME, as every compound RTCP packet carries.
    public init(source: UInt32, cname: String) {
        self.init(chunks: [Chunk(source: source, items: [Item(type: .cname, text: cname)])])
    }

    /// Parses a buffer holding exactly one SDES packet.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> SourceDescription {
        try parse(RTCPFrame.single(bytes, packetType: packetType, name: "source description"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> SourceDescription {
        var reader = frame.bodyReader
        let bodyStart = reader.offset
        var chunks: [Chunk] = []
        for _ in 0..<frame.header.count {
            let source = try reader.readUInt32("rtcp: SDES chunk SSRC")
            var items: [Item] = []
            while true {
                let type = try reader.readUInt8("rtcp: SDES item list (no END)")
                if type == 0 { break }
                let length = Int(try reader.readUInt8("rtcp: SDES item length"))
                let value = try reader.readBytes(length, "rtcp: SDES item")
                items.append(Item(type: ItemType(rawValue: type), value: Array(value)))
            }
            // The END byte is followed by nulls up to the next 32-bit boundary.
            let misalignment = (reader.offset - bodyStart) % 4
            if misalignment != 0 { try reader.skip(4 - misalignment, "rtcp: SDES chunk padding") }
            chunks.append(Chunk(source: source, items: items))
        }
        return SourceDescription(chunks: chunks)
    }

    /// The packet on the wire; throws for more than 31 chunks or an item over 255 bytes.
    public func serialize() throws(WireError) -> [UInt8] {
        try makeRTCPPacket(count: chunks.count, packetType: Self.packetType, name: "source description") {
            (writer: inout ByteWriter) throws(WireError) in
            for chunk in chunks {
                writer.write(chunk.source)
                var itemBytes = 0
                for item in chunk.items {
                    guard item.type.rawValue != 0 else {
                        throw .invalid(what: "rtcp: SDES item", reason: "type 0 is END and cannot carry a value")
                    }
                    guard item.value.count <= 255 else {
                        throw .invalid(what: "rtcp: SDES item", reason: "\(item.value.count) bytes, at most 255 fit")
                    }
                    writer.write(item.type.rawValue)
                    writer.write(UInt8(item.value.count))
                    writer.write(contentsOf: item.value)
                    itemBytes += 2 + item.value.count
                }
                // END plus nulls to the boundary: 1 to 4 zero bytes.
                writer.writeZeros(4 - itemBytes % 4)
            }
        }
    }
}
