import ScreenWatchdog

/// Says "Reconnecting…" only for a problem that lasts: the actor that runs `ReconnectRule` for a
/// call. The call session tells it, with the time, whether signalling is up and whether every
/// media connection is healthy (none disconnected or failed); `tick` once a second moves the
/// notice on. It remembers how often the notice was shown, for the statistics.
public actor ReconnectWatch {
    private var rule = ReconnectRule()
    public private(set) var notice: ReconnectRule.Notice = .hidden
    /// How many times the notice went from hidden to shown.
    public private(set) var timesShown = 0

    public init() {}

    @discardableResult
    public func signalling(up: Bool, now: ContinuousClock.Instant) -> ReconnectRule.Notice {
        record(rule.signalling(up: up, now: now))
    }

    @discardableResult
    public func connections(healthy: Bool, now: ContinuousClock.Instant) -> ReconnectRule.Notice {
        record(rule.connection(healthy: healthy, now: now))
    }

    @discardableResult
    public func tick(now: ContinuousClock.Instant) -> ReconnectRule.Notice {
        record(rule.tick(now: now))
    }

    public var isReconnecting: Bool { notice == .reconnecting }

    private func record(_ next: ReconnectRule.Notice) -> ReconnectRule.Notice {
        if notice == .hidden, next == .reconnecting { timesShown += 1 }
        notice = next
        return next
    }
}
