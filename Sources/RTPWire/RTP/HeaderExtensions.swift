import ShareCore

// RFC 8285 §4.2 One-Byte Header (profile 0xBEDE)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |       0xBE    |    0xDE       |           length=3            |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |  ID   | L=0   |     data      |  ID   |  L=1  |   data...
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//       ...data   |    0 (pad)    |    0 (pad)    |  ID   | L=3   |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                          data                                 |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// ID 1–14, L = length − 1 (1–16 data bytes); a zero byte is padding; ID 15 ends the parse.
//
// RFC 8285 §4.3 Two-Byte Header (profile 0x100 + 4 application bits)
//
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |       0x10    |    0x00       |           length=3            |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |      ID       |     L=0       |     ID        |     L=1       |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |       data    |    0 (pad)    |       ID      |      L=4      |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                          data                                 |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// ID 1–255, L = length (0–255 data bytes); a zero ID byte is padding.

/// One RFC 8285 header extension element: a local identifier and its data.
public struct HeaderExtensionElement: Hashable, Sendable {
    public var id: UInt8
    public var data: [UInt8]

    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }
}

extension RTPHeaderExtension {
    /// The one-byte form's profile value, RFC 8285 §4.2.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// The two-byte form's profile value with zero application bits, RFC 8285 §4.3.
    public static let twoByteProfile: UInt16 = 0x1000

    /// Whether this extension holds one-byte elements.
    public var isOneByteForm: Bool { profile == Self.oneByteProfile }
    /// Whether this extension holds two-byte elements (any of the 16 application-bit values).
    public var isTwoByteForm: Bool { profile & 0xFFF0 == Self.twoByteProfile }

    /// The RFC 8285 elements, in wire order, padding skipped. Throws `unsupported` for a profile
    /// that is neither form, and `truncated` for an element running past the data.
    public func elements() throws(WireError) -> [HeaderExtensionElement] {
        var reader = ByteReader(data)
        var elements: [HeaderExtensionElement] = []
        if isOneByteForm {
            while !reader.isAtEnd {
                let header = try reader.readUInt8()
                if header == 0 { continue }  // padding
                let id = header >> 4
                if id == 15 { break }  // reserved: stop processing, RFC 8285 §4.2
                let length = Int(header & 0x0F) + 1
                let data = try reader.readBytes(length, "rtp: one-byte header extension element")
                elements.append(HeaderExtensionElement(id: id, data: Array(data)))
            }
        } else if isTwoByteForm {
            while !reader.isAtEnd {
                let id = try reader.readUInt8()
                if id == 0 { continue }  // padding
                let length = Int(try reader.readUInt8("rtp: two-byte header extension length"))
                let data = try reader.readBytes(length, "rtp: two-byte header extension element")
                elements.append(HeaderExtensionElement(id: id, data: Array(data)))
            }
        } else {
            throw .unsupported(
                what: "rtp: header extension",
                reason: "profile 0x\(String(profile, radix: 16)) is neither RFC 8285 form")
        }
        return elements
    }

    /// Packs elements in the one-byte form when every ID is 1–14 and every length 1–16, else in
    /// the two-byte form; padded with zeros to a 32-bit boundary. Throws for ID 0 or data over
    /// 255 bytes.
    public init(elements: [HeaderExtensionElement]) throws(WireError) {
        var writer = ByteWriter()
        let fitsOneByte = elements.allSatisfy { (1...14).contains($0.id) && (1...16).contains($0.data.count) }
        if fitsOneByte {
            for element in elements {
                writer.write(element.id << 4 | UInt8(element.data.count - 1))
                writer.write(contentsOf: element.data)
            }
        } else {
            for element in elements {
                guard element.id != 0 else {
                    throw .invalid(what: "rtp: header extension element", reason: "ID 0 is reserved for padding")
                }
                guard element.data.count <= 255 else {
                    throw .invalid(
                        what: "rtp: header extension element \(element.id)",
                        reason: "\(element.data.count) bytes, at most 255 fit")
                }
                writer.write(element.id)
                writer.write(UInt8(element.data.count))
                writer.write(contentsOf: element.data)
            }
        }
        writer.writeZeros((4 - writer.count % 4) % 4)
        self.init(profile: fitsOneByte ? Self.oneByteProfile : Self.twoByteProfile, data: writer.bytes)
    }
}

extension RTPPacket {
    /// The RFC 8285 elements of the header extension; empty when the packet has none.
    public func headerExtensionElements() throws(WireError) -> [HeaderExtensionElement] {
        try headerExtension?.elements() ?? []
    }

    /// Replaces the header extension with `elements` (removing it when empty).
    public mutating func setHeaderExtensionElements(_ elements: [HeaderExtensionElement]) throws(WireError) {
        headerExtension = elements.isEmpty ? nil : try RTPHeaderExtension(elements: elements)
    }
}
