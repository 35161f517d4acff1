import ShareCore
import Testing

@Suite struct FrameQueueTests {
    func frame(_ sequence: UInt64, at micros: Int64) -> VideoFrame {
        VideoFrame(format: .i420, width: 2, height: 2, planes: [], captureMicros: micros, sequence: sequence)
    }

    @Test func fullQueueDropsOldestSoNewestWins() {
        let queue = FrameQueue()
        for n in 0..<8 { queue.push(frame(UInt64(n), at: 1_000)) }
        #expect(queue.count == 6)
        #expect(queue.counters.droppedFull == 2)
        var taken: [UInt64] = []
        while let f = queue.take(now: 1_000) { taken.append(f.sequence) }
        #expect(taken == [2, 3, 4, 5, 6, 7])
    }

    @Test func framesOlderThan100msAreDroppedWhenTaken() {
        let queue = FrameQueue()
        queue.push(frame(1, at: 0))  // 150 ms old at take: late
        queue.push(frame(2, at: 50_000))  // 100 ms old: on time (limit is inclusive)
        queue.push(frame(3, at: 120_000))
        #expect(queue.take(now: 150_000)?.sequence == 2)
        #expect(queue.counters.droppedLate == 1)
        #expect(queue.take(now: 150_000)?.sequence == 3)
        #expect(queue.take(now: 150_000) == nil)
    }

    @Test func waiterWakesOnPushAndOnClose() async {
        let queue = FrameQueue()
        let waiter = Thread.detachedResult { queue.take(waitingUpTo: .seconds(10), now: { 0 })?.sequence }
        queue.push(frame(9, at: 0))
        #expect(await waiter.value == 9)
        let closed = Thread.detachedResult { queue.take(waitingUpTo: .seconds(10), now: { 0 })?.sequence }
        queue.close()
        #expect(await closed.value == nil)
    }
}

import Foundation

extension Thread {
    /// Runs blocking work on a thread of its own and hands back its result asynchronously.
    static func detachedResult<T: Sendable>(_ work: @escaping @Sendable () -> T) -> Task<T, Never> {
        Task {
            await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: work()) }.start()
            }
        }
    }
}
