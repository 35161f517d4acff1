import ShareCore
import Synchronization
import Testing

@testable import ScreenWatchdog

/// The feed's destination stays one closure however many frames pass (a kiosk's camera sends
/// 2.6 million a day): a closure kept bare in the feed's lock was rewrapped by every frame, and
/// stopping then overflowed the stack (see `FrameSink`).
@Suite struct CameraFeedTests {
    @Test func aFeedThatPassedManyFramesStops() {
        let feed = CameraFeed()
        let count = Atomic<Int>(0)
        feed.start { _ in count.add(1, ordering: .relaxed) }
        feed.switchTo(generation: 1)
        let frame = VideoFrame(
            format: .i420, width: 2, height: 2,
            planes: [Plane(bytes: [0, 0, 0, 0], stride: 2), Plane(bytes: [0], stride: 1), Plane(bytes: [0], stride: 1)])
        for _ in 0..<324_000 { feed.push(frame, generation: 1) }
        feed.stop()
        #expect(count.load(ordering: .relaxed) == 324_000)
        #expect(feed.framesDelivered == 324_000)
    }
}
