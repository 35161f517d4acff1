// RFC 7741 §4.3 VP8 payload header (RFC 6386 §9.1 frame tag), the first bytes of every VP8 frame;
// a key frame adds a start code and its dimensions.
//
//          0 1 2 3 4 5 6 7
//         +-+-+-+-+-+-+-+-+
//         |Size0|H| VER |P|   P=0: key frame; H: show frame
//         +-+-+-+-+-+-+-+-+
//         |     Size1     |   first partition size = Size0 + 8*Size1 + 2048*Size2
//         +-+-+-+-+-+-+-+-+
//         |     Size2     |
//         +-+-+-+-+-+-+-+-+
//   key:  | 9d 01 2a start code | 14-bit width, 2-bit scale | 14-bit height, 2-bit scale (little-endian)

import ShareCore

/// The frame tag at the start of a VP8 frame, and a key frame's dimensions.
public struct VP8FrameHeader: Hashable, Sendable {
    public var isKeyframe: Bool
    public var version: UInt8
    public var showFrame: Bool
    public var firstPartitionSize: Int
    /// Key frames only.
    public var width: Int?
    public var height: Int?

    public init(
        isKeyframe: Bool, version: UInt8, showFrame: Bool, firstPartitionSize: Int, width: Int? = nil,
        height: Int? = nil
    ) {
        self.isKeyframe = isKeyframe
        self.version = version
        self.showFrame = showFrame
        self.firstPartitionSize = firstPartitionSize
        self.width = width
        self.height = height
    }

    /// Whether a frame is a key frame, from its first byte alone (the P bit is clear).
    public static func isKeyframe(firstByte: UInt8) -> Bool { firstByte & 0x01 == 0 }

    public init(frame: some Collection<UInt8>) throws(WireError) {
        var reader = ByteReader(frame)
        let tag = try reader.readUInt24("vp8: frame tag")
        let b0 = UInt32(tag >> 16), b1 = UInt32(tag >> 8 & 0xFF), b2 = UInt32(tag & 0xFF)
        isKeyframe = b0 & 0x01 == 0
        version = UInt8(truncatingIfNeeded: b0 >> 1 & 0x07)
        showFrame = b0 & 0x10 != 0
        firstPartitionSize = Int(b0 >> 5 | b1 << 3 | b2 << 11)
        guard version <= 3 else {
            throw .invalid(what: "vp8: frame tag", reason: "version \(version) is not 0–3")
        }
        guard isKeyframe else { return }
        let startCode = try reader.readUInt24("vp8: key frame start code")
        guard startCode == 0x9D012A else {
            throw .invalid(what: "vp8: key frame", reason: "start code is not 9d 01 2a")
        }
        let widthField = try reader.readUInt16("vp8: key frame width")
        let heightField = try reader.readUInt16("vp8: key frame height")
        // Little-endian 16-bit fields: the low 14 bits are the size.
        width = Int((widthField >> 8 | widthField << 8) & 0x3FFF)
        height = Int((heightField >> 8 | heightField << 8) & 0x3FFF)
    }
}
