/// The receiver's side of the receiver-driven ladder (the built-in viewer; the browser client
/// follows the same rules): per remote screen, the decoded-frame count once a second in, the
/// screens to report as `screenStalled` out. A pure state machine.
///
/// - A screen whose decoded count has not changed for 4 s is reported stalled.
/// - Any change of the count is movement, a fall included: a rebuilt screen's decoder starts
///   again from zero.
/// - A report is held up to 3 minutes; after that it is dropped (the sharer's ladder has given up
///   long before) until the screen moves again and can stall anew.
/// - A screen that goes away (its share ended) is forgotten.
public struct StallReporter: Sendable {
    public static let stallAfter: Duration = .seconds(4)
    public static let holdFor: Duration = .seconds(180)

    private struct Screen: Sendable {
        var decoded: Int
        var changedAt: ContinuousClock.Instant
        var reportedSince: ContinuousClock.Instant?
        var dropped = false
    }

    private var screens: [String: Screen] = [:]

    public init() {}

    /// The screens reported stalled after the last tick.
    public private(set) var stalled: Set<String> = []

    /// `decoded`: each remote screen's decoded-frame count now, by screen (the sharer's id).
    @discardableResult
    public mutating func tick(now: ContinuousClock.Instant, decoded: [String: Int]) -> Set<String> {
        screens = screens.filter { decoded[$0.key] != nil }
        for (id, count) in decoded {
            guard var screen = screens[id], screen.decoded == count else {
                screens[id] = Screen(decoded: count, changedAt: now)
                continue
            }
            if screen.reportedSince == nil, !screen.dropped, now - screen.changedAt >= Self.stallAfter {
                screen.reportedSince = now
            }
            if let since = screen.reportedSince, now - since >= Self.holdFor {
                screen.reportedSince = nil
                screen.dropped = true
            }
            screens[id] = screen
        }
        stalled = Set(screens.filter { $0.value.reportedSince != nil }.keys)
        return stalled
    }
}
