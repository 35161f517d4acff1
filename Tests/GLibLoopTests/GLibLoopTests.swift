import GLibLoop
import ShareCore
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
        let seen = Locked<[Int]>([])
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
        await #expect(throws: Boom.self) {
            try await onPlainThread { try loop.invokeAndWait { () throws -> Int in throw Boom() } }
        }
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
        let timer = loop.repeating(every: .milliseconds(2)) {
            ticks.change {
                $0 += 1; return $0 < 3
            }
        }
        try? await ticks.until("three ticks", within: .seconds(30)) { $0 >= 3 }  // the expectation judges
        try await Task.sleep(for: .milliseconds(50))
        #expect(ticks.value == 3, "no tick after the one that returned false")
        timer.cancel()
    }
}

/// A value confined to a loop: used there through `invoke`/`perform`, released there.
@Suite struct LoopConfinedTests {
    /// Not Sendable; says on which thread it was released.
    final class Counter {
        var count = 0
        let released: @Sendable (Bool) -> Void
        let loop: GLibLoop
        init(loop: GLibLoop, released: @escaping @Sendable (Bool) -> Void) {
            self.loop = loop
            self.released = released
        }
        deinit { released(loop.isLoopThread) }
    }

    @Test func theValueIsUsedOnTheLoopThread() async throws {
        let loop = GLibLoop(name: "confined")
        defer { loop.stop() }
        let box = LoopConfined(Counter(loop: loop) { _ in }, on: loop)
        for _ in 0..<10 { box.invoke { $0.count += 1 } }
        let (count, onLoop) = try await box.perform { counter in (counter.count, loop.isLoopThread) }
        #expect(count == 10 && onLoop)
        #expect(try await onPlainThread { try box.invokeAndWait { $0.count } } == 10)
        try await box.perform { _ in box.value = Counter(loop: loop) { _ in } }
        #expect(try await box.perform { $0.count } == 0, "the value may be replaced on the loop")
    }

    /// Released from another thread, the value goes on the loop thread, every time: the box once
    /// kept a second reference while handing the value over, and when the loop dropped its one
    /// first the value went on the releasing thread (seen under ThreadSanitizer's timing).
    @Test func theValueIsReleasedOnTheLoopThread() async throws {
        let loop = GLibLoop(name: "confined-release")
        defer { loop.stop() }
        let releasedOnLoop = Locked<[Bool]>([])
        for _ in 0..<2_000 {
            var box: LoopConfined<Counter>? = LoopConfined(
                Counter(loop: loop) { onLoop in
                    releasedOnLoop.withLock { $0.append(onLoop) }
                }, on: loop)
            #expect(box != nil)
            box = nil
        }
        _ = try await loop.perform { 0 }  // the releases were queued before this
        let released = releasedOnLoop.withLock { $0 }
        #expect(released.count == 2_000)
        #expect(released.allSatisfy { $0 }, "\(released.filter { !$0 }.count) released off the loop thread")
    }

    @Test func performFailsWithLoopStoppedOnceTheLoopHasGone() async {
        let loop = GLibLoop(name: "confined-stopped")
        let box = LoopConfined(Counter(loop: loop) { _ in }, on: loop)
        loop.stop()
        #expect(loop.hasStopped)
        await #expect(throws: GLibLoopError.self) { try await box.perform { $0.count } }
        #expect(box.value.count == 0, "after the loop has stopped its owner may touch it anywhere")
    }

    /// Exactly one of the work and its drop runs, whether the loop stops before or after.
    @Test func invokeIfDroppedRunsExactlyOneOfTheTwo() async throws {
        for round in 0..<20 {
            let loop = GLibLoop(name: "dropped-\(round)")
            let ran = Atomic<Int>(0), dropped = Atomic<Int>(0)
            for _ in 0..<200 {
                loop.invoke({ ran.add(1, ordering: .relaxed) }, ifDropped: { dropped.add(1, ordering: .relaxed) })
            }
            loop.stop()
            #expect(ran.load(ordering: .relaxed) + dropped.load(ordering: .relaxed) == 200)
            loop.invoke({ ran.add(1, ordering: .relaxed) }, ifDropped: { dropped.add(1, ordering: .relaxed) })
            #expect(
                ran.load(ordering: .relaxed) + dropped.load(ordering: .relaxed) == 201, "after stop: dropped at once")
        }
    }
}
