/// When to say "Reconnecting…": only for a problem that lasts — signalling down for 4 s, or a
/// connection disconnected or failed for 3 s — and for a second past recovery, so a blip never
/// flashes the notice and a recovery is seen. A pure state machine: `tick(now:)` and the two
/// observations take the time as a parameter; the call session's watch runs it.
public struct ReconnectRule: Sendable, Equatable {
    public static let signallingGrace: Duration = .seconds(4)
    public static let connectionGrace: Duration = .seconds(3)
    public static let linger: Duration = .seconds(1)

    public enum Notice: Sendable, Equatable { case hidden, reconnecting }

    private var signallingDownSince: ContinuousClock.Instant?
    private var connectionDownSince: ContinuousClock.Instant?
    private var recoveredAt: ContinuousClock.Instant?
    public private(set) var notice: Notice = .hidden

    public init() {}

    public mutating func signalling(up: Bool, now: ContinuousClock.Instant) -> Notice {
        if up { signallingDownSince = nil } else if signallingDownSince == nil { signallingDownSince = now }
        return tick(now: now)
    }

    /// `healthy` is false while the media connection is disconnected or failed.
    public mutating func connection(healthy: Bool, now: ContinuousClock.Instant) -> Notice {
        if healthy { connectionDownSince = nil } else if connectionDownSince == nil { connectionDownSince = now }
        return tick(now: now)
    }

    public mutating func tick(now: ContinuousClock.Instant) -> Notice {
        let lasting =
            (signallingDownSince.map { now - $0 >= Self.signallingGrace } ?? false)
            || (connectionDownSince.map { now - $0 >= Self.connectionGrace } ?? false)
        let problem = signallingDownSince != nil || connectionDownSince != nil
        switch notice {
        case .hidden:
            if lasting { notice = .reconnecting; recoveredAt = nil }
        case .reconnecting:
            if problem {
                recoveredAt = nil
            } else if let recovered = recoveredAt {
                if now - recovered >= Self.linger { notice = .hidden; recoveredAt = nil }
            } else {
                recoveredAt = now
            }
        }
        return notice
    }
}
