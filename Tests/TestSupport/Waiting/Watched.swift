import ShareCore

/// A value that a test's fakes and callbacks change and the test waits on. Each change wakes the
/// waits whose condition now holds: nothing polls, and a wait ends the moment its event happens.
///
///     let frames = Watched(0)
///     camera.start { _ in frames.change { $0 += 1 } }
///     try await frames.until("five frames") { $0 >= 5 }
public final class Watched<Value: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var value: Value
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state: Locked<State>

    public init(_ value: Value) { state = Locked(State(value: value)) }

    /// The value now.
    public var value: Value { state.withLock { $0.value } }

    /// Changes the value under its lock and wakes every wait whose condition the new value meets.
    @discardableResult
    public func change<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        let (result, woken) = state.withLock { state in
            let result = body(&state.value)
            let met = state.waiters.filter { $0.value.condition(state.value) }
            for id in met.keys { state.waiters[id] = nil }
            return (result, met.values.map(\.continuation))
        }
        for continuation in woken { continuation.resume() }
        return result
    }

    /// Returns once `condition` holds for the value (at once if it already does). After `within`
    /// it throws `NotReached` naming `what`, read then, so it can say what was seen.
    public func until(
        _ what: @autoclosure () -> String, within: Duration = .seconds(60),
        file: String = #fileID, line: Int = #line,
        _ condition: @escaping @Sendable (Value) -> Bool
    ) async throws {
        let met = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.next(where: condition); return true
            }
            group.addTask {
                try await Task.sleep(for: within); return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        guard met else { throw NotReached(what: what(), within: within, file: file, line: line) }
    }

    /// Suspends until a change meets `condition` (or it holds already); CancellationError when
    /// the waiting task is cancelled.
    private func next(where condition: @escaping @Sendable (Value) -> Bool) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }; return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Met already, cancelled already, or listed to be woken (nil).
                let now = state.withLock { state -> Result<Void, any Error>? in
                    if condition(state.value) { return .success(()) }
                    // A cancellation that came before this wait was listed found nothing to end.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
