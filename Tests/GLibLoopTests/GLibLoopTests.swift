import GLibLoop
import Synchronization
import TestSupport
import Testing

/// Work on the loop thread, in order. `invokeAndWait` blocks its caller, so these call it from a
/// plain thread (`onPlainThread`), as its callers must.
@Suite struct GLibLoopTests {
    @Test func runsWorkOnItsOwnThreadInOrder() async throws {
        let loop = GLibLoop(name: "test-loop")
        defer { loop.stop() }
        #expect(!loop.isLoopThread)
        let seen = Mutex<[Int]>([])
        for i in 0..<100 { loop.invoke { seen.withLock { $0.append(i) } } }
        let onLoop = try await onPlainThread { try loop.invokeAndWait { loop.isLoopThread } }
        #expect(onLoop)
        #expect(seen.withLock { $0 } == Array(0..<100), "invoke keeps submission order")
    }

    @Test func invokeAndWaitPassesResultsAndErrors() async throws {
        struct Boom: Error {}
        let loop = GLibLoop()
        defer { loop.stop() }
        #expect(try await onPlainThread { try loop.invokeAndWait { 6 * 7 } } == 42)
        await #expect(throws: Boom.self) { try await onPlainThread { try loop.invokeAndWait { () throws -> Int in throw Boom() } } }
    }

    @Test func stopJoinsAndLaterWorkIsRefused() async throws {
        let loop = GLibLoop()
        loop.stop()
        loop.stop()
        await #expect(throws: GLibLoopError.self) { try await onPlainThread { try loop.invokeAndWait { 1 } } }
    }

    /// Async callers await `perform`: suspended, not blocking a thread of the cooperative pool,
    /// until the loop has run the work; told when the loop stopped before it could.
    @Test func performRunsOnTheLoopAndPassesResultsAndErrors() async throws {
        struct Boom: Error {}
        let loop = GLibLoop(name: "perform")
        #expect(try await loop.perform { loop.isLoopThread })
        #expect(try await loop.perform { 6 * 7 } == 42)
        await #expect(throws: Boom.self) { try await loop.perform { () throws -> Int in throw Boom() } }
        // Many at once from the pool: none holds a pool thread while it waits.
        let sum = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<64 { group.addTask { try await loop.perform { i } } }
            return try await group.reduce(0, +)
        }
        #expect(sum == (0..<64).reduce(0, +))
        loop.stop()
        await #expect(throws: GLibLoopError.self) { try await loop.perform { 1 } }
    }
}

@Suite struct GLibTimerTests {
    @Test func repeatsOnTheLoopUntilCancelled() async throws {
        let loop = GLibLoop()
        defer { loop.stop() }
        let ticks = Watched<[Bool]>([])
        let timer = loop.repeating(every: .milliseconds(5)) {
            ticks.change { $0.append(loop.isLoopThread) }
            return true
        }
        try? await ticks.until("three ticks", within: .seconds(30)) { $0.count >= 3 }  // the expectations judge
        timer.cancel()
        let count = ticks.value.count
        #expect(count >= 3)
        #expect(ticks.value.allSatisfy { $0 }, "every tick ran on the loop thread")
        try await Task.sleep(for: .milliseconds(50))
        #expect(ticks.value.count <= count + 1, "no ticks after cancel")
    }

    @Test func returningFalseStopsTheTimer() async throws {
        let loop = GLibLoop()
        defer { loop.stop() }
        let ticks = Watched(0)
        let timer = loop.repeating(every: .milliseconds(2)) { ticks.change { $0 += 1; return $0 < 3 } }
        try? await ticks.until("three ticks", within: .seconds(30)) { $0 >= 3 }  // the expectation judges
        try await Task.sleep(for: .milliseconds(50))
        #expect(ticks.value == 3, "no tick after the one that returned false")
        timer.cancel()
    }
}
