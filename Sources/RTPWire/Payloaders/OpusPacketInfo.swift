// RFC 6716 §3.1 the TOC byte that opens every Opus packet, and §3.2 the frame packing it selects.
//
//          0 1 2 3 4 5 6 7
//         +-+-+-+-+-+-+-+-+
//         | config  |s| c |   config: mode, bandwidth, frame size (Table 2); s: stereo;
//         +-+-+-+-+-+-+-+-+   c: 0 = one frame, 1 = two equal, 2 = two sized, 3 = M frames (§3.2.5)
//
// Code 3 adds a frame count byte |v|p|     M     | (VBR, padding, 1–48 frames), then padding
// lengths and, with v=1, M−1 frame lengths.

import ShareCore

/// The TOC byte of an Opus packet.
public struct OpusTOC: Hashable, Sendable {
    public enum Mode: Hashable, Sendable { case silk, hybrid, celt }
    public enum Bandwidth: Hashable, Sendable { case narrowband, mediumband, wideband, superwideband, fullband }

    /// config, 0–31 (RFC 6716 Table 2).
    public var configuration: UInt8
    public var isStereo: Bool
    /// c, 0–3: how the packet's frames are packed.
    public var frameCountCode: UInt8

    public init(_ byte: UInt8) {
        configuration = byte >> 3
        isStereo = byte & 0x04 != 0
        frameCountCode = byte & 0x03
    }

    public var mode: Mode {
        switch configuration {
        case 0...11: return .silk
        case 12...15: return .hybrid
        default: return .celt
        }
    }

    public var bandwidth: Bandwidth {
        switch configuration {
        case 0...3, 16...19: return .narrowband
        case 4...7: return .mediumband
        case 8...11, 20...23: return .wideband
        case 12...13, 24...27: return .superwideband
        default: return .fullband
        }
    }

    /// Samples in each frame at 48 kHz: 120 (2.5 ms) to 2880 (60 ms).
    public var samplesPerFrame: Int {
        let index = Int(configuration & 0x03)
        switch configuration {
        case 0...11: return [480, 960, 1920, 2880][index]  // SILK: 10, 20, 40, 60 ms
        case 12...15: return index & 1 == 0 ? 480 : 960  // hybrid: 10, 20 ms
        default: return [120, 240, 480, 960][index]  // CELT: 2.5, 5, 10, 20 ms
        }
    }

    public var frameDuration: Duration { .microseconds(samplesPerFrame * 1000 / 48) }
}

/// What an Opus packet holds, checked against RFC 6716 §3.4's rules R1–R7.
public struct OpusPacketInfo: Hashable, Sendable {
    public var toc: OpusTOC
    public var frameCount: Int
    /// Samples per channel at 48 kHz in the whole packet.
    public var sampleCount: Int { frameCount * toc.samplesPerFrame }
    public var duration: Duration { .microseconds(sampleCount * 1000 / 48) }

    static let maxFrameSize = 1275
    static let maxPacketSamples = 5760  // 120 ms

    public init(packet: [UInt8]) throws(WireError) {
        var reader = ByteReader(packet)
        toc = OpusTOC(try reader.readUInt8("opus: packet (TOC byte)"))
        switch toc.frameCountCode {
        case 0:
            frameCount = 1
            try Self.checkFrameSize(reader.remaining)
        case 1:
            frameCount = 2
            guard reader.remaining % 2 == 0 else {
                throw .invalid(
                    what: "opus: code 1 packet",
                    reason: "two equal frames need an even length (\(reader.remaining) bytes)")
            }
            try Self.checkFrameSize(reader.remaining / 2)
        case 2:
            frameCount = 2
            let first = try Self.readFrameLength(&reader)
            guard first <= reader.remaining else {
                throw .truncated(what: "opus: code 2 first frame", got: reader.remaining, need: first)
            }
            try Self.checkFrameSize(reader.remaining - first)
        default:
            let countByte = try reader.readUInt8("opus: code 3 frame count")
            frameCount = Int(countByte & 0x3F)
            guard frameCount >= 1 else {
                throw .invalid(what: "opus: code 3 packet", reason: "frame count is 0")
            }
            guard frameCount * toc.samplesPerFrame <= Self.maxPacketSamples else {
                throw .invalid(
                    what: "opus: code 3 packet",
                    reason: "\(frameCount) frames of \(toc.samplesPerFrame) samples exceed 120 ms (5760 samples)")
            }
            var padding = 0
            if countByte & 0x40 != 0 {
                while true {
                    let byte = Int(try reader.readUInt8("opus: padding length"))
                    padding += byte == 255 ? 254 : byte
                    if byte != 255 { break }
                }
            }
            var sizes = 0
            if countByte & 0x80 != 0 {
                for _ in 1..<frameCount {
                    let size = try Self.readFrameLength(&reader)
                    try Self.checkFrameSize(size)
                    sizes += size
                }
            }
            let data = reader.remaining - padding
            guard data >= sizes else {
                throw .truncated(what: "opus: code 3 frames and padding", got: reader.remaining, need: sizes + padding)
            }
            if countByte & 0x80 != 0 {
                try Self.checkFrameSize(data - sizes)
            } else {
                guard data % frameCount == 0 else {
                    throw .invalid(
                        what: "opus: code 3 CBR packet",
                        reason: "\(data) bytes do not split into \(frameCount) equal frames")
                }
                try Self.checkFrameSize(data / frameCount)
            }
        }
    }

    /// §3.2.1: one byte below 252, else two (second × 4 + first).
    private static func readFrameLength(_ reader: inout ByteReader) throws(WireError) -> Int {
        let first = Int(try reader.readUInt8("opus: frame length"))
        guard first >= 252 else { return first }
        return Int(try reader.readUInt8("opus: frame length (second byte)")) * 4 + first
    }

    private static func checkFrameSize(_ size: Int) throws(WireError) {
        guard size <= maxFrameSize else {
            throw .invalid(what: "opus: frame", reason: "\(size) bytes exceed the 1275-byte limit")
        }
    }
}
