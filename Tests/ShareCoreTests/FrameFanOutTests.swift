import Foundation
import ShareCore
import Synchronization
import Testing

/// The fan-out's one guarantee, tried under real concurrency: a producer thread delivers as fast
/// as it can while branches start and stop on other threads, and no frame may reach a branch
/// after its `stop()` (or the fan-out's) has returned.
@Suite struct FrameFanOutTests {
    @Test func noFrameReachesABranchAfterItsStopReturns() async throws {
        let source = FloodSource()
        let fanOut = FrameFanOut(source, running: .betweenStartAndStop)
        fanOut.start()
        let recorders = (0..<8).map { _ in Recorder() }
        let branches = recorders.map { recorder in
            let branch = fanOut.branch()
            branch.start { _ in recorder.received() }
            return branch
        }
        for recorder in recorders { #expect(waitUntil { recorder.frames > 0 }, "every branch gets frames") }
        // Stop the branches from threads of their own, all at once, while the producer floods.
        await withTaskGroup(of: Void.self) { group in
            for (branch, recorder) in zip(branches, recorders) {
                group.addTask {
                    await onThread {
                        branch.stop(); recorder.stopReturned()
                    }
                }
            }
        }
        let afterwards = source.delivered
        #expect(waitUntil { source.delivered > afterwards + 2_000 }, "the source keeps producing")
        for recorder in recorders { #expect(recorder.late == 0, "frames after stop returned") }
        fanOut.stop()
    }

    @Test func noFrameReachesAnyBranchAfterTheFanOutsStopReturns() async throws {
        let source = FloodSource()
        let fanOut = FrameFanOut(source, running: .betweenStartAndStop)
        fanOut.start()
        let recorder = Recorder()
        fanOut.branch().start { _ in recorder.received() }
        #expect(waitUntil { recorder.frames > 100 })
        await onThread {
            fanOut.stop(); recorder.stopReturned()
        }
        #expect(!source.isRunning)
        try await Task.sleep(for: .milliseconds(20))
        #expect(recorder.late == 0)
    }

    /// Branches come and go on several threads while one steady branch keeps counting.
    @Test func branchesAddedAndRemovedWhileDelivering() async throws {
        let source = FloodSource()
        let fanOut = FrameFanOut(source)
        let steady = Recorder()
        let steadyBranch = fanOut.branch()
        steadyBranch.start { _ in steady.received() }
        #expect(source.starts == 1)
        let late = Tally(), starved = Tally()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    await onThread {
                        for _ in 0..<150 {
                            let recorder = Recorder()
                            let branch = fanOut.branch()
                            branch.start { _ in recorder.received() }
                            if !waitUntil(seconds: 5, { recorder.frames > 0 }) { starved.add(1) }
                            branch.stop()
                            recorder.stopReturned()
                            late.add(recorder.late)
                        }
                    }
                }
            }
        }
        let counted = steady.frames
        #expect(waitUntil { steady.frames > counted }, "the steady branch still receives")
        #expect(late.value == 0, "frames after stop returned")
        #expect(starved.value == 0, "every branch started got frames")
        #expect(source.starts == 1 && source.stops == 0, "the steady branch kept the source running")
        steadyBranch.stop()
        #expect(source.stops == 1 && !source.isRunning, "the last branch stopped the source")
        #expect(steady.late == 0)
    }

    @Test func theSourceRunsWhileBranchesRunOrBetweenStartAndStop() {
        let whileBranches = FloodSource()
        let camera = FrameFanOut(whileBranches)
        let one = camera.branch(), two = camera.branch()
        #expect(!whileBranches.isRunning)
        one.start { _ in }
        two.start { _ in }
        #expect(whileBranches.starts == 1, "one source for every branch")
        one.stop()
        #expect(whileBranches.isRunning)
        two.stop()
        #expect(!whileBranches.isRunning && whileBranches.stops == 1)

        let between = FloodSource()
        let screen = FrameFanOut(between, running: .betweenStartAndStop)
        let branch = screen.branch()
        branch.start { _ in }
        #expect(!between.isRunning, "branches alone do not start it")
        screen.start()
        screen.start()
        #expect(between.isRunning && between.starts == 1)
        branch.stop()
        #expect(between.isRunning, "a branch stopped leaves it running for the others")
        screen.stop()
        #expect(!between.isRunning && between.stops == 1)
    }

    /// A screen started early (beside ICE and DTLS) by a branch that drops its frames: the
    /// encoder's branch takes over without the source stopping in between (an attended portal
    /// session would end with it), and its stop leaves nothing running.
    @Test func aBranchTakesOverFromAnEarlierOneWithoutStoppingTheSource() {
        let source = FloodSource()
        let fanOut = FrameFanOut(source)
        let early = fanOut.branch()
        early.start { _ in }
        #expect(source.isRunning)
        let encoder = fanOut.branch(takingOverFrom: early)
        let recorder = Recorder()
        encoder.start { _ in recorder.received() }
        #expect(source.starts == 1 && source.stops == 0, "the source ran through the take-over")
        #expect(waitUntil { recorder.frames > 0 }, "the new branch gets the frames")
        encoder.stop()
        #expect(!source.isRunning && source.stops == 1, "the earlier branch did not outlive it")

        // Never started (the connection failed before its encoder began): its stop ends the early one.
        let again = FloodSource()
        let second = FrameFanOut(again)
        let held = second.branch()
        held.start { _ in }
        second.branch(takingOverFrom: held).stop()
        #expect(!again.isRunning && again.starts == 1 && again.stops == 1)
    }
}

/// Counts the frames a branch received, and those that came after its stop returned.
private final class Recorder: Sendable {
    private let count = Atomic<Int>(0)
    private let lateCount = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    var frames: Int { count.load(ordering: .acquiring) }
    var late: Int { lateCount.load(ordering: .acquiring) }
    func received() {
        if stopped.load(ordering: .acquiring) { lateCount.add(1, ordering: .relaxed) }
        count.add(1, ordering: .releasing)
    }
    func stopReturned() { stopped.store(true, ordering: .releasing) }
}

/// A source whose thread delivers frames back to back until `stop()`, which returns once the
/// thread has ended (as `VideoFrameSource` asks).
private final class FloodSource: VideoFrameSource {
    private struct State {
        var finished: DispatchSemaphore?
        var starts = 0, stops = 0
    }
    private let state = Locked(State())
    private let count = Tally()
    var delivered: Int { count.value }
    var starts: Int { state.withLock { $0.starts } }
    var stops: Int { state.withLock { $0.stops } }
    var isRunning: Bool { state.withLock { $0.finished != nil } }

    private final class Flag: Sendable { let on = Atomic<Bool>(true) }

    private let flag = Locked<Flag?>(nil)

    func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        let running = Flag()
        let finished = DispatchSemaphore(value: 0)
        flag.withLock { $0 = running }
        state.withLock {
            $0.finished = finished; $0.starts += 1
        }
        let count = self.count
        let frame = VideoFrame(
            format: .i420, width: 2, height: 2,
            planes: [
                Plane(bytes: [0, 0, 0, 0], stride: 2), Plane(bytes: [0], stride: 1),
                Plane(bytes: [0], stride: 1)
            ])
        let thread = Thread {
            while running.on.load(ordering: .acquiring) {
                deliver(frame)
                count.add(1)
            }
            finished.signal()
        }
        thread.name = "flood"
        thread.start()
    }

    func stop() {
        guard let running = flag.withLock({ $0.take() }) else { return }
        running.on.store(false, ordering: .releasing)
        let finished = state.withLock { s in
            defer { s.finished = nil; s.stops += 1 }; return s.finished
        }
        finished?.wait()
    }
}

final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func add(_ n: Int) { count.add(n, ordering: .acquiringAndReleasing) }
}

/// Polls `condition` until it holds or `seconds` pass.
private func waitUntil(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(200)
    }
    return true
}

/// Runs `body` on a plain thread of its own (stops block; they must not hold a pool thread).
private func onThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            body()
            done.resume()
        }.start()
    }
}

/// A branch that has taken a day's frames (30 fps for three hours here) still stops: a closure
/// kept bare in the branch's lock used to be rewrapped by every delivery, and releasing the chain
/// overflowed the stack (see `FrameSink`).
@Suite struct FrameSinkTests {
    @Test func aBranchThatTookManyFramesStops() {
        let source = ManualFrames()
        let fanOut = FrameFanOut(source)
        let branch = fanOut.branch()
        let count = Atomic<Int>(0)
        branch.start { _ in count.add(1, ordering: .relaxed) }
        source.push(times: 324_000)
        branch.stop()
        #expect(count.load(ordering: .relaxed) == 324_000)
    }
}

/// Delivers frames when the test pushes them, on the test's own thread.
private final class ManualFrames: VideoFrameSource {
    private let sink = Locked(FrameSink())
    private let frame = VideoFrame(
        format: .i420, width: 2, height: 2,
        planes: [Plane(bytes: [0, 0, 0, 0], stride: 2), Plane(bytes: [0], stride: 1), Plane(bytes: [0], stride: 1)])

    func start(deliver: @escaping @Sendable (VideoFrame) -> Void) { sink.withLock { $0.deliver = deliver } }
    func stop() { sink.withLock { $0.deliver = nil } }

    func push(times: Int) {
        let deliver = sink.withLock { $0.deliver }
        for _ in 0..<times { deliver?(frame) }
    }
}

extension FrameFanOutTests {
    /// Several branches: each frame carries one `FrameConversions` for all of them; one branch
    /// alone gets the frame as it came.
    @Test func framesToSeveralBranchesShareOneConversionTable() async throws {
        let source = FloodSource()
        let fanOut = FrameFanOut(source, running: .betweenStartAndStop)
        let tables = Locked<[ObjectIdentifier?]>([])
        let first = fanOut.branch()
        first.start { frame in tables.withLock { $0.append(frame.conversions.map(ObjectIdentifier.init)) } }
        fanOut.start()
        #expect(waitUntil { tables.withLock { $0.count } > 10 })
        #expect(tables.withLock { $0.allSatisfy { $0 == nil } }, "one branch: nothing to share")
        let second = Locked<[ObjectIdentifier?]>([])
        let other = fanOut.branch()
        other.start { frame in second.withLock { $0.append(frame.conversions.map(ObjectIdentifier.init)) } }
        #expect(waitUntil { second.withLock { $0.count } > 10 })
        fanOut.stop()
        let seen = second.withLock { $0 }
        #expect(seen.allSatisfy { $0 != nil })
        // The same table reached the first branch with the same frame.
        let firstTables = Set(tables.withLock { $0 }.compactMap { $0 })
        #expect(seen.compactMap { $0 }.contains { firstTables.contains($0) })
        first.stop()
        other.stop()
    }
}
