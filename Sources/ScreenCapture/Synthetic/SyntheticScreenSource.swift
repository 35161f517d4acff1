import Foundation
import ShareCore
import Synchronization

/// The synthetic screen as a capture source: a thread of its own renders `SyntheticScreen` at a
/// steady frame rate and hands each BGRx frame to `deliver` (which should be cheap: push into a
/// `FrameQueue`). `stop()` ends the thread and waits for it.
public final class SyntheticScreenSource: Sendable {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    private let running = Atomic<Bool>(false)
    private let framesProduced = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    public init(width: Int = 1920, height: Int = 1080, framesPerSecond: Int = 30) {
        self.width = width
        self.height = height
        self.framesPerSecond = max(1, min(framesPerSecond, 60))
    }

    public var frameCount: Int { framesProduced.load(ordering: .relaxed) }

    public func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        running.store(true, ordering: .releasing)
        let (width, height, fps) = (self.width, self.height, self.framesPerSecond)
        let thread = Thread { [self] in
            let screen = SyntheticScreen(width: width, height: height, framesPerSecond: fps)
            let interval = 1_000_000 / Int64(fps)
            let origin = Clocks.monotonicMicros()
            var number: UInt64 = 0
            while running.load(ordering: .acquiring) {
                let due = origin + Int64(number) * interval
                let now = Clocks.monotonicMicros()
                if due > now { usleep(useconds_t(due - now)) }
                let captured = Clocks.monotonicMicros()
                deliver(screen.render(frame: number, wallClockMillis: Clocks.wallMillis(), captureMicros: captured))
                framesProduced.add(1, ordering: .relaxed)
                number += 1
                // Fell more than a second behind (a stalled machine): skip ahead rather than burst.
                let behind = Clocks.monotonicMicros() - (origin + Int64(number) * interval)
                if behind > 1_000_000 { number += UInt64(behind / interval) }
            }
            finished.signal()
        }
        thread.name = "synthetic-screen"
        thread.start()
    }

    /// Stops the frames; `start` may begin them again (a restarted capture numbers from 0).
    public func stop() {
        guard started.load(ordering: .acquiring), running.exchange(false, ordering: .acquiringAndReleasing) else {
            return
        }
        finished.wait()
        started.store(false, ordering: .releasing)
    }

    deinit { stop() }
}
