/// When a room's state file is written: at most once a second. A change a second or more after
/// the last write is written at once; changes sooner wait until the second is up, and one write
/// then carries them all. A pure value: `now` comes in.
struct SaveSchedule: Sendable {
    var interval: Duration = .seconds(1)
    private var lastWrite: ContinuousClock.Instant?
    /// A change is waiting for its write.
    private(set) var waiting = false

    /// The room changed at `now`: true when it is to be written now.
    mutating func changed(now: ContinuousClock.Instant) -> Bool {
        if let lastWrite, now - lastWrite < interval {
            waiting = true
            return false
        }
        lastWrite = now
        waiting = false
        return true
    }

    /// True when a change that waited is due at `now`.
    mutating func due(now: ContinuousClock.Instant) -> Bool {
        guard waiting, let lastWrite, now - lastWrite >= interval else { return false }
        self.lastWrite = now
        waiting = false
        return true
    }
}
