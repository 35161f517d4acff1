/// Waits that double after each failure up to a cap, as a value: republishing a WHIP share
/// (2 s, doubling to a minute) and making a failed room connection again (2 s or 15 s, doubling
/// to a minute) both count their failures here. `delay` is the wait before the next attempt.
public struct Backoff: Sendable, Equatable {
    public let first: Duration
    public let cap: Duration
    /// Attempts that failed since the last success.
    public private(set) var failures: Int

    public init(first: Duration, cap: Duration, failures: Int = 0) {
        self.first = first
        self.cap = cap
        self.failures = failures
    }

    /// The wait after `failures` failures: `first` doubled that many times, at most `cap`.
    public func delay(afterFailures failures: Int) -> Duration {
        var wait = first
        for _ in 0..<max(0, failures) {
            guard wait < cap else { break }
            wait *= 2
        }
        return min(wait, cap)
    }

    /// The wait before the next attempt.
    public var delay: Duration { delay(afterFailures: failures) }

    /// An attempt failed: returns the wait before the next one, and doubles the one after it.
    public mutating func failed() -> Duration {
        let wait = delay
        failures += 1
        return wait
    }

    /// An attempt held (a share that stayed up, a connection that connected): the next failure
    /// waits `first` again.
    public mutating func succeeded() { failures = 0 }
}
