import Foundation
import ScreenCapture
import ShareCore
import Synchronization
import Testing
@testable import VideoSend

/// The encoder thread with real encoders: a still screen is sent again once a second, and a policy
/// or bitrate change reaches the running encoder without a new one.
@Suite struct EncodingThreadTests {
    static func waitFor(_ what: () -> Bool) async throws {
        // The limit only guards a hang on a loaded machine; nothing here is timed.
        let deadline = ContinuousClock.now + .seconds(60)
        while !what(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    }

    @Test func aStillScreenIsEncodedAgainOnceASecond() async throws {
        let queue = FrameQueue()
        let out = Mutex<[(Bool, Int64)]>([])
        let thread = VideoEncodingThread(queue: queue, settings: .init(factory: VideoEncoderFactory(codec: .vp8), bitrate: 800_000),
                                         logger: .disabled) { frame, capture in out.withLock { $0.append((frame.isKeyframe, capture)) } }
        thread.start()
        let screen = SyntheticScreen(width: 320, height: 240, framesPerSecond: 30)
        queue.push(screen.render(frame: 0, wallClockMillis: 0, captureMicros: Clocks.monotonicMicros()))
        try await Self.waitFor { thread.counters.framesRepeated >= 2 }
        thread.requestKeyframe()
        try await Self.waitFor { out.withLock { $0.contains { $0.0 } && $0.count >= 4 } }
        thread.stop()
        let counters = thread.counters
        #expect(counters.framesIn == 1)
        #expect(counters.framesRepeated >= 2)
        let stamps = out.withLock { $0.map(\.1) }
        #expect(stamps == stamps.sorted() && Set(stamps).count == stamps.count, "each repeat stamped anew")
        // The keyframe asked for while still came from a repeat.
        #expect(out.withLock { $0.dropFirst().contains { $0.0 } })
    }

    @Test func policyAndBitrateChangesKeepTheEncoderUnlessTheSizeChanges() async throws {
        let queue = FrameQueue()
        let thread = VideoEncodingThread(queue: queue, settings: .init(factory: VideoEncoderFactory(codec: .h264), bitrate: 8_000_000,
                                                                       maxLongSide: 1920, policy: .detail),
                                         logger: .disabled) { _, _ in }
        thread.start()
        let screen = SyntheticScreen(width: 1280, height: 720, framesPerSecond: 30)
        var number: UInt64 = 0
        func feed(_ count: Int) async throws {
            for _ in 0..<count {
                queue.push(screen.render(frame: number, wallClockMillis: number * 33, captureMicros: Clocks.monotonicMicros()))
                number += 1
                try await Task.sleep(for: .milliseconds(33))
            }
        }
        try await feed(10)
        try await Self.waitFor { thread.counters.framesEncoded >= 5 }
        let before = thread.counters
        #expect(before.width == 1280 && before.policy == .detail)
        thread.setBitrate(2_000_000)  // detail keeps full size at any rate: same encoder
        try await feed(10)
        let lowered = thread.counters
        #expect(lowered.encodersMade == before.encodersMade)
        #expect(lowered.targetBitrate == 2_000_000)
        thread.setPolicy(.motion)  // 1280 long side already: size kept, same encoder
        try await feed(10)
        let motion = thread.counters
        #expect(motion.policy == .motion)
        #expect(motion.encodersMade == before.encodersMade)
        thread.setBitrate(100_000)  // motion at 100 kbit/s: a smaller size, so one new encoder
        try await feed(10)
        thread.stop()
        let small = thread.counters
        #expect(small.width < 1280)
        #expect(small.encodersMade == before.encodersMade + 1)
        #expect(small.limit == .bandwidth)
    }
}
