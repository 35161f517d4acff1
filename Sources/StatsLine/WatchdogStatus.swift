/// What the screen watchdog is doing, for the status line's second line, `--stats-json`
/// (`watchdog.state`, `watchdog.rung`, `watchdog.lastStep`) and `sharectl diagnose`.
public struct WatchdogStatus: Sendable, Codable, Equatable {
    /// `watching`, `recovering` (a ladder is climbing), `scaledDown` (a fresh encoder's 30 s at
    /// two thirds of the size) or `gaveUp` (someone's view could not be restored).
    public var state: String
    /// The highest rung of either ladder: `none`, `keyframe`, `freshEncoder`, `newTransceiver`
    /// (sender side) or `keyframes`, `rebuild`, `shareAgain`, `giveUp` (receiver-driven).
    public var rung: String
    /// How many steps have been taken so far.
    public var steps: Int
    public var lastStep: Step?
    /// The last few steps (at most `recentLimit`), oldest first, so a reader sampling once a
    /// second misses none that came in the same second.
    public var recent: [Step]
    /// The notices showing to the sharer now.
    public var notices: [String]

    public static let recentLimit = 8

    public struct Step: Sendable, Codable, Equatable {
        /// 1 for the first step, counting up.
        public var number: Int
        /// Seconds since the share started.
        public var t: Double
        public var action: String
        /// The connection or person it is about.
        public var subject: String?
        public var reason: String

        public init(number: Int, t: Double, action: String, subject: String?, reason: String) {
            self.number = number
            self.t = t
            self.action = action
            self.subject = subject
            self.reason = reason
        }
    }

    public init(
        state: String = "watching", rung: String = "none", steps: Int = 0, lastStep: Step? = nil,
        recent: [Step] = [], notices: [String] = []
    ) {
        self.state = state
        self.rung = rung
        self.steps = steps
        self.lastStep = lastStep
        self.recent = recent
        self.notices = notices
    }

    /// For the status line: `watchdog watching`, or
    /// `watchdog recovering at rebuild: rebuild bea 12 s ago (…reason…)`.
    public func statusText(now t: Double) -> String {
        var text = "watchdog \(state)"
        if rung != "none" { text += " at \(rung)" }
        if let step = lastStep, state != "watching" || t - step.t < 10 {
            let subject = step.subject.map { " \($0)" } ?? ""
            text += ": \(step.action)\(subject) \(Int(max(0, t - step.t).rounded())) s ago (\(step.reason))"
        }
        return text
    }
}
