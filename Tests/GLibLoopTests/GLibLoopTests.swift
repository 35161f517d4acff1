import Foundation
import GLibLoop
import Synchronization
import Testing

@Suite struct GLibLoopTests {
    @Test func runsWorkOnItsOwnThreadInOrder() throws {
        let loop = GLibLoop(name: "test-loop")
        defer { loop.stop() }
        #expect(!loop.isLoopThread)
        let seen = Mutex<[Int]>([])
        for i in 0..<100 { loop.invoke { seen.withLock { $0.append(i) } } }
        let onLoop = try loop.invokeAndWait { loop.isLoopThread }
        #expect(onLoop)
        #expect(seen.withLock { $0 } == Array(0..<100), "invoke keeps submission order")
    }

    @Test func invokeAndWaitPassesResultsAndErrors() throws {
        struct Boom: Error {}
        let loop = GLibLoop()
        defer { loop.stop() }
        #expect(try loop.invokeAndWait { 6 * 7 } == 42)
        #expect(throws: Boom.self) { try loop.invokeAndWait { () throws -> Int in throw Boom() } }
    }

    @Test func stopJoinsAndLaterWorkIsRefused() throws {
        let loop = GLibLoop()
        loop.stop()
        loop.stop()
        #expect(throws: GLibLoopError.self) { try loop.invokeAndWait { 1 } }
    }
}

@Suite struct GLibTimerTests {
    @Test func repeatsOnTheLoopUntilCancelled() async throws {
        let loop = GLibLoop()
        defer { loop.stop() }
        let ticks = Mutex<[Bool]>([])
        let timer = loop.repeating(every: .milliseconds(5)) {
            ticks.withLock { $0.append(loop.isLoopThread) }
            return true
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while ticks.withLock({ $0.count }) < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        timer.cancel()
        let count = ticks.withLock { $0.count }
        #expect(count >= 3)
        #expect(ticks.withLock { $0.allSatisfy { $0 } }, "every tick ran on the loop thread")
        try await Task.sleep(for: .milliseconds(50))
        #expect(ticks.withLock { $0.count } <= count + 1, "no ticks after cancel")
    }

    @Test func returningFalseStopsTheTimer() async throws {
        let loop = GLibLoop()
        defer { loop.stop() }
        let ticks = Mutex(0)
        let timer = loop.repeating(every: .milliseconds(2)) { ticks.withLock { $0 += 1; return $0 < 3 } }
        let deadline = ContinuousClock.now + .seconds(30)
        while ticks.withLock({ $0 }) < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(ticks.withLock { $0 } == 3, "no tick after the one that returned false")
        timer.cancel()
    }
}
