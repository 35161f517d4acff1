import Testing
@testable import VideoSend

/// Real x264 and libvpx: a bitrate change mid-stream reaches the running encoder (no keyframe, no
/// new encoder) and the output follows it; timestamps drive the rate control.
@Suite struct EncoderRateTests {
    /// Bytes of `count` moving frames encoded at 30 fps from `first` on.
    static func bytes(_ encoder: any VideoEncoder, frames range: Range<Int>, fps: Int = 30) throws -> (Int, Int) {
        var total = 0, keyframes = 0
        for index in range {
            let frame = try Self.noise(index: index)
            if let out = try encoder.encode(frame, timestamp90kHz: Int64(index) * Int64(90_000 / fps)) {
                total += out.bytes.count
                if out.isKeyframe { keyframes += 1 }
            }
        }
        return (total, keyframes)
    }

    /// Busy content: the moving test pattern with faint noise on it, which costs bits at every
    /// quantizer, so the rate control has something to trade (a fixed sequence).
    static func noise(index: Int) throws -> I420Frame {
        var frame = I420Frame.testPattern(width: 640, height: 360, index: index)
        var state = UInt32(truncatingIfNeeded: index &* 2_654_435_761 &+ 1)
        for i in frame.y.indices {
            state = state &* 1_664_525 &+ 1_013_904_223
            frame.y[i] = UInt8(clamping: Int(frame.y[i]) + Int(state >> 29) - 4)
        }
        return frame
    }

    static func encoders() throws -> [any VideoEncoder] {
        [
            try X264Encoder(.init(width: 640, height: 360, bitrate: 1_500_000, keyframeInterval: 3000)),
            try VP8Encoder(.init(width: 640, height: 360, bitrate: 1_500_000, keyframeInterval: 3000))
        ]
    }

    @Test(arguments: [VideoCodec.h264, .vp8])
    func loweringTheBitrateLowersTheOutputWithoutAKeyframe(codec: VideoCodec) throws {
        let encoder = try #require(try Self.encoders().first { $0.codec == codec })
        _ = try Self.bytes(encoder, frames: 0..<30)  // settle
        let (high, _) = try Self.bytes(encoder, frames: 30..<90)
        try encoder.setRate(bitrate: 200_000, frameRate: 30)
        #expect(encoder.bitrate == 200_000)
        _ = try Self.bytes(encoder, frames: 90..<120)  // the buffer drains
        let (low, keyframes) = try Self.bytes(encoder, frames: 120..<180)
        #expect(keyframes == 0)
        // Two seconds at 1.5 Mbit/s is about 375 kB, at 200 kbit/s about 50 kB.
        #expect(low * 3 < high, "high \(high) B, low \(low) B")
        #expect(low < 120_000, "two seconds at 200 kbit/s gave \(low) B")
    }

    @Test(arguments: [VideoCodec.h264, .vp8])
    func fewerFramesASecondGetMoreBitsEach(codec: VideoCodec) throws {
        // The same target at 30 fps and at 5 fps (timestamps 200 ms apart): each 5 fps frame gets
        // more bits, so a second costs about the same.
        let fast = try #require(try Self.encoders().first { $0.codec == codec })
        let slow = try #require(try Self.encoders().first { $0.codec == codec })
        try slow.setRate(bitrate: 1_500_000, frameRate: 5)
        _ = try Self.bytes(fast, frames: 0..<30)
        _ = try Self.bytes(slow, frames: 0..<5, fps: 5)
        let (fastBytes, _) = try Self.bytes(fast, frames: 30..<90)  // 2 s
        let (slowBytes, _) = try Self.bytes(slow, frames: 5..<15, fps: 5)  // 2 s
        #expect(slowBytes * 2 > fastBytes, "30 fps \(fastBytes) B, 5 fps \(slowBytes) B over two seconds")
    }

    @Test func bitrateBelowOneKilobitIsRefused() throws {
        let encoder = try X264Encoder(.init(width: 320, height: 240))
        #expect(throws: EncoderError.self) { try encoder.setRate(bitrate: 10, frameRate: 30) }
    }
}
