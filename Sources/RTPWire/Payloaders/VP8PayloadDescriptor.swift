// RFC 7741 §4.2 VP8 payload descriptor, at the start of every VP8 RTP payload.
//
//          0 1 2 3 4 5 6 7
//         +-+-+-+-+-+-+-+-+
//         |X|R|N|S|R| PID | (REQUIRED)
//         +-+-+-+-+-+-+-+-+
//    X:   |I|L|T|K| RSV   | (OPTIONAL)
//         +-+-+-+-+-+-+-+-+
//    I:   |M| PictureID   | (OPTIONAL; M=1: 15 bits over two bytes)
//         +-+-+-+-+-+-+-+-+
//         |   PictureID   |
//         +-+-+-+-+-+-+-+-+
//    L:   |   TL0PICIDX   | (OPTIONAL)
//         +-+-+-+-+-+-+-+-+
//    T/K: |TID|Y| KEYIDX  | (OPTIONAL)
//         +-+-+-+-+-+-+-+-+

import ShareCore

/// A VP8 picture ID as the sender wrote it: 7 bits in one byte, or 15 bits in two (M=1).
public enum VP8PictureID: Hashable, Sendable {
    case short(UInt8)
    case long(UInt16)

    public var value: UInt16 {
        switch self {
        case let .short(id): return UInt16(id & 0x7F)
        case let .long(id): return id & 0x7FFF
        }
    }
}

/// The RFC 7741 payload descriptor that opens every VP8 RTP payload.
public struct VP8PayloadDescriptor: Hashable, Sendable {
    /// N: the frame is not used as a reference by any other frame.
    public var isNonReference: Bool
    /// S: this packet starts a VP8 partition.
    public var startsPartition: Bool
    /// PID: the partition this packet's first byte belongs to (0–7).
    public var partitionIndex: UInt8
    public var pictureID: VP8PictureID?
    public var tl0PictureIndex: UInt8?
    /// TID: the temporal layer (0–3).
    public var temporalLayerID: UInt8?
    /// Y: the frame depends only on the base layer (meaningful with `temporalLayerID`).
    public var isLayerSync: Bool
    /// KEYIDX (0–31).
    public var keyIndex: UInt8?

    public init(
        isNonReference: Bool = false, startsPartition: Bool, partitionIndex: UInt8 = 0,
        pictureID: VP8PictureID? = nil, tl0PictureIndex: UInt8? = nil, temporalLayerID: UInt8? = nil,
        isLayerSync: Bool = false, keyIndex: UInt8? = nil
    ) {
        self.isNonReference = isNonReference
        self.startsPartition = startsPartition
        self.partitionIndex = partitionIndex
        self.pictureID = pictureID
        self.tl0PictureIndex = tl0PictureIndex
        self.temporalLayerID = temporalLayerID
        self.isLayerSync = isLayerSync
        self.keyIndex = keyIndex
    }

    /// S=1 with PID=0: the packet carries the first bytes of a frame.
    public var startsFrame: Bool { startsPartition && partitionIndex == 0 }

    /// Reads a descriptor, leaving `reader` at the VP8 payload.
    public static func parse(_ reader: inout ByteReader) throws(WireError) -> VP8PayloadDescriptor {
        let first = try reader.readUInt8("vp8: payload descriptor")
        let partition = first & 0x07
        var descriptor = VP8PayloadDescriptor(
            isNonReference: first & 0x20 != 0, startsPartition: first & 0x10 != 0,
            partitionIndex: partition)
        guard first & 0x80 != 0 else { return descriptor }
        let extensions = try reader.readUInt8("vp8: payload descriptor extension (X)")
        let hasPictureID = extensions & 0x80 != 0, hasTL0 = extensions & 0x40 != 0
        let hasTID = extensions & 0x20 != 0, hasKeyIndex = extensions & 0x10 != 0
        if hasPictureID {
            let high = try reader.readUInt8("vp8: picture ID")
            if high & 0x80 != 0 {
                let low = try reader.readUInt8("vp8: 15-bit picture ID")
                descriptor.pictureID = .long(UInt16(high & 0x7F) << 8 | UInt16(low))
            } else {
                descriptor.pictureID = .short(high)
            }
        }
        if hasTL0 { descriptor.tl0PictureIndex = try reader.readUInt8("vp8: TL0PICIDX") }
        if hasTID || hasKeyIndex {
            let byte = try reader.readUInt8("vp8: TID/Y/KEYIDX")
            if hasTID {
                descriptor.temporalLayerID = byte >> 6
                descriptor.isLayerSync = byte & 0x20 != 0
            }
            if hasKeyIndex { descriptor.keyIndex = byte & 0x1F }
        }
        return descriptor
    }

    public func serialize(into writer: inout ByteWriter) {
        let hasExtensions = pictureID != nil || tl0PictureIndex != nil || temporalLayerID != nil || keyIndex != nil
        writer.write(
            (hasExtensions ? 0x80 : 0) | (isNonReference ? 0x20 : 0) | (startsPartition ? 0x10 : 0)
                | partitionIndex & 0x07)
        guard hasExtensions else { return }
        // L needs T: a TL0PICIDX without a layer goes out as layer 0.
        let hasTID = temporalLayerID != nil || tl0PictureIndex != nil
        writer.write(
            (pictureID != nil ? 0x80 : 0) | (tl0PictureIndex != nil ? 0x40 : 0) | (hasTID ? 0x20 : 0)
                | (keyIndex != nil ? 0x10 : 0) as UInt8)
        switch pictureID {
        case let .short(id): writer.write(id & 0x7F)
        case let .long(id): writer.write(0x8000 | id & 0x7FFF)
        case nil: break
        }
        if let tl0PictureIndex { writer.write(tl0PictureIndex) }
        if hasTID || keyIndex != nil {
            let tid = (temporalLayerID ?? 0) & 0x03
            writer.write(tid << 6 | (isLayerSync ? 0x20 : 0) | (keyIndex ?? 0) & 0x1F)
        }
    }

    /// The descriptor's length on the wire.
    public var encodedSize: Int {
        var writer = ByteWriter(capacity: 6)
        serialize(into: &writer)
        return writer.count
    }
}
