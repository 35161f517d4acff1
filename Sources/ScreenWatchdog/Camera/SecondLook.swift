/// A device node appears in /dev before its driver is ready to be read: the director looks at
/// once and once more `settle` later, at its first tick after that. A pure value: `now` comes in.
struct SecondLook: Sendable, Equatable {
    var settle: Duration = .milliseconds(700)
    private(set) var due: ContinuousClock.Instant?

    init(settle: Duration = .milliseconds(700)) { self.settle = settle }

    /// A node appeared at `now` (another that appears first moves the second look later).
    mutating func nodeAppeared(now: ContinuousClock.Instant) { due = now + settle }

    /// True once, at the first tick on or after the second look's time.
    mutating func tick(now: ContinuousClock.Instant) -> Bool {
        guard let due, now >= due else { return false }
        self.due = nil
        return true
    }
}
