import TestSupport

/// A clock that moves only when a test says so. Its instants are `ContinuousClock`'s, as the
/// ladders take. Sleepers wake when `advance` passes their deadline; a test waits for them to
/// arrive with `untilSleeping`.
final class ManualClock: Clock, Sendable {
    typealias Instant = ContinuousClock.Instant
    typealias Duration = Swift.Duration

    private struct State: Sendable {
        var now: Instant
        var sleepers: [(deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state: Watched<State>

    init(start: Instant = ContinuousClock.now) { state = Watched(State(now: start)) }

    var now: Instant { state.value.now }
    var minimumResolution: Duration { .nanoseconds(1) }
    var sleeping: Int { state.value.sleepers.count }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready = state.change { state -> Bool in
                if deadline <= state.now { return true }
                state.sleepers.append((deadline, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func advance(by duration: Duration) {
        let due = state.change { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now + duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.map(\.continuation)
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once `count` tasks sleep on this clock (a hang guard of `within`).
    func untilSleeping(
        _ count: Int, within: Duration = .seconds(60), file: String = #fileID,
        line: Int = #line
    ) async throws {
        try await state.until("\(count) asleep on the clock (\(sleeping) are)", within: within, file: file, line: line)
        {
            $0.sleepers.count == count
        }
    }

    /// Wakes every sleeper with CancellationError (the test is over).
    func cancelSleepers() {
        let all = state.change { state in
            defer { state.sleepers = [] }; return state.sleepers.map(\.continuation)
        }
        for continuation in all { continuation.resume(throwing: CancellationError()) }
    }
}
