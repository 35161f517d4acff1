import ShareCore

/// A peer connection's state, settable from any thread (the transport's handler runs on the loop
/// thread), published in order on an `AsyncStream` and awaited by `wait()`. The first failure is
/// the reason kept; after `closed` nothing changes.
final class ConnectionStateBox: Sendable {
    typealias State = SecureTransport.State

    private let shared = Locked<(state: State, waiters: [CheckedContinuation<Void, any Error>])>((.new, []))
    private let continuation: AsyncStream<State>.Continuation

    init(continuation: AsyncStream<State>.Continuation) {
        self.continuation = continuation
    }

    var state: State { shared.withLock { $0.state } }

    func set(_ new: State) {
        let (changed, waiters) = shared.withLock { s -> (Bool, [CheckedContinuation<Void, any Error>]) in
            guard s.state != new, s.state != .closed else { return (false, []) }
            if case .failed = s.state, new != .closed { return (false, []) }
            s.state = new
            // Publish under the lock so two threads' changes reach the stream in order.
            continuation.yield(new)
            guard Self.isSettled(new) else { return (true, []) }
            defer { s.waiters = [] }
            return (true, s.waiters)
        }
        guard changed else { return }
        for waiter in waiters {
            if new == .connected {
                waiter.resume()
            } else {
                waiter.resume(throwing: PeerConnectionError.connectionFailed(new.description))
            }
        }
        if new == .closed { continuation.finish() }
    }

    /// Returns once connected; throws the reason when the connection failed or was closed.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let settled: State? = shared.withLock { s in
                if Self.isSettled(s.state) { return s.state }
                s.waiters.append(waiter)
                return nil
            }
            guard let settled else { return }
            if settled == .connected {
                waiter.resume()
            } else {
                waiter.resume(throwing: PeerConnectionError.connectionFailed(settled.description))
            }
        }
    }

    private static func isSettled(_ state: State) -> Bool {
        switch state {
        case .connected, .failed, .closed: true
        case .new, .connecting: false
        }
    }
}
