/// A one-way gate: `open()` once, and every `wait(upTo:)` returns, at once or as soon as it
/// opens, or when its time is up. Waiting takes no thread and polls nothing: a waiter is a
/// continuation, resumed by `open()` or by its own deadline timer, whichever comes first.
public final class Latch: Sendable {
    private struct State {
        var open = false
        var next = 0
        var waiters: [Int: (waiter: CheckedContinuation<Bool, Never>, timer: DeadlineTimer?)] = [:]
    }

    private let state = Locked(State())

    public init() {}

    public var isOpen: Bool { state.withLock { $0.open } }

    /// Opens the gate; the waiters go on. Opening again does nothing.
    public func open() {
        let waiting = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            guard !s.open else { return [] }
            s.open = true
            defer { s.waiters = [:] }
            return s.waiters.values.map { entry in
                entry.timer?.cancel()
                return entry.waiter
            }
        }
        for waiter in waiting { waiter.resume(returning: true) }
    }

    /// Waits until the gate opens, however long that takes.
    public func wait() async {
        _ = await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            if enroll(waiter) == nil { waiter.resume(returning: true) }
        }
    }

    /// Keeps `waiter` until the gate opens and returns its id; nil (keeping nothing) when open.
    private func enroll(_ waiter: CheckedContinuation<Bool, Never>) -> Int? {
        state.withLock { s in
            guard !s.open else { return nil }
            s.next += 1
            s.waiters[s.next] = (waiter, nil)
            return s.next
        }
    }

    /// Waits until the gate opens (true) or `timeout` has passed (false).
    public func wait(upTo timeout: Duration) async -> Bool {
        await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            guard let id = enroll(waiter) else { return waiter.resume(returning: true) }
            // The timer is kept with its waiter until one of the two ends the wait.
            let timer = DeadlineTimer(after: .nanoseconds(Int(max(0, timeout.inNanoseconds)))) { [self] in
                let late = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                late?.waiter.resume(returning: false)
            }
            timer.arm()
            let kept = state.withLock { s -> Bool in
                guard s.waiters[id] != nil else { return false }
                s.waiters[id]?.timer = timer
                return true
            }
            // Opened (or timed out) meanwhile: the timer has nothing left to end.
            if !kept { timer.cancel() }
        }
    }
}
