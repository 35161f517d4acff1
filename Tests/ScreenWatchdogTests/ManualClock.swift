import Synchronization

/// A clock that moves only when a test says so. Its instants are `ContinuousClock`'s, as the
/// ladders take. Sleepers wake when `advance` passes their deadline.
final class ManualClock: Clock, Sendable {
    typealias Instant = ContinuousClock.Instant
    typealias Duration = Swift.Duration

    private struct State {
        var now: Instant
        var sleepers: [(deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state: Mutex<State>

    init(start: Instant = ContinuousClock.now) { state = Mutex(State(now: start)) }

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }
    var sleeping: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready = state.withLock { state -> Bool in
                if deadline <= state.now { return true }
                state.sleepers.append((deadline, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now + duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.map(\.continuation)
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for continuation in due { continuation.resume() }
    }

    /// Wakes every sleeper with CancellationError (the test is over).
    func cancelSleepers() {
        let all = state.withLock { state in defer { state.sleepers = [] }; return state.sleepers.map(\.continuation) }
        for continuation in all { continuation.resume(throwing: CancellationError()) }
    }
}
