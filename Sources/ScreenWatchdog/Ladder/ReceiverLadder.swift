/// The receiver-driven ladder (DESIGN.md "Receiver-driven ladder"), a pure state machine on the
/// sharer's side: `tick(now:people:)` once a second with what each person last reported and what
/// left for them, and it returns the steps to take, each with its reason.
///
/// For one person whose report says `screenStalled`:
/// 1. keyframes to that person's connection (again every 2 s while on this rung), notice
///    "NAME's view of your screen stalled — recovering";
/// 2. still reported 6 s after the first keyframe left: `rebuild` for that person alone, notice
///    "Restarting your share for NAME…";
/// 3. still reported 10 s later: `shareAgain` to everyone from the same capture, no picker;
/// 4. 10 s after that: `giveUp`, notice "Couldn't restore NAME's view — try Stop and Share again".
///
/// Rate limits: a rebuild at most once a minute per person, a share again at most once every five
/// minutes (for everyone). A step its rate limit forbids is skipped (`held`, the reason says so)
/// and the next rung comes at its usual time, so the give-up notice is never later than it would
/// be. Neither rebuild nor share again is taken unless frames left for that person since the last
/// step: then the ladder holds (the sender-side watchdog owns a screen that is not leaving).
/// A report that clears ends the ladder for that person (`recovered`, notice taken away) — but not
/// when it clears only because a rebuilt screen's count started again at zero and nothing of the
/// new screen has been decoded: then the ladder keeps its place.
///
/// The sender-side steps (fresh encoder, new transceiver) are not this ladder's: `SenderLadder`
/// takes them from the sharer's own counters, so they happen only when the screen has stopped
/// leaving here too.
public struct ReceiverLadder: Sendable {
    public static let keyframeRepeat: Duration = .seconds(2)
    public static let rebuildAfter: Duration = .seconds(6)
    public static let shareAgainAfter: Duration = .seconds(10)
    public static let giveUpAfter: Duration = .seconds(10)
    public static let rebuildEvery: Duration = .seconds(60)
    public static let shareAgainEvery: Duration = .seconds(300)

    public enum Rung: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case none = 0, keyframes, rebuild, shareAgain, giveUp
        public static func < (a: Rung, b: Rung) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .none: "none"
            case .keyframes: "keyframes"
            case .rebuild: "rebuild"
            case .shareAgain: "shareAgain"
            case .giveUp: "giveUp"
            }
        }
    }

    /// The notices, word for word.
    public enum Notice {
        public static func recovering(_ name: String) -> String { "\(name)'s view of your screen stalled — recovering" }
        public static func restarting(_ name: String) -> String { "Restarting your share for \(name)…" }
        public static func gaveUp(_ name: String) -> String {
            "Couldn't restore \(name)'s view — try Stop and Share again"
        }
    }

    private struct Person: Sendable {
        var rung = Rung.none
        var lastStepAt: ContinuousClock.Instant?
        var lastKeyframeRequestAt: ContinuousClock.Instant?
        var firstKeyframeAt: ContinuousClock.Instant?
        /// Counters when the last step was taken: keyframes and frames must leave after it.
        var keyframeMark = 0
        var sentMark = 0
        var lastRebuildAt: ContinuousClock.Instant?
        var heldSaid = false
        var notice: String?
    }

    private var people: [String: Person] = [:]
    private var lastShareAgainAt: ContinuousClock.Instant?

    public init() {}

    /// The highest rung anyone is on.
    public var rung: Rung { people.values.map(\.rung).max() ?? .none }
    public func rung(of person: String) -> Rung { people[person]?.rung ?? .none }
    /// The notices showing now, by person.
    public var notices: [String: String] { people.compactMapValues(\.notice) }

    public mutating func tick(now: ContinuousClock.Instant, people observed: [String: PersonObservation])
        -> [LadderStep]
    {
        var steps: [LadderStep] = []
        for (id, person) in people where observed[id] == nil && person.notice != nil {
            steps.append(LadderStep(.notice(id, nil), reason: "\(id) left the call"))
        }
        people = people.filter { observed[$0.key] != nil }
        for (id, observation) in observed.sorted(by: { $0.key < $1.key }) {
            var person = people[id] ?? Person()
            steps += step(id, &person, observation, now: now)
            people[id] = person
        }
        return steps
    }

    private mutating func step(
        _ id: String, _ person: inout Person, _ seen: PersonObservation,
        now: ContinuousClock.Instant
    ) -> [LadderStep] {
        let name = seen.name
        // Counters that went backwards started again (a rebuild or a share again): count from zero.
        if seen.framesSent < person.sentMark { person.sentMark = 0 }
        if seen.keyframesSent < person.keyframeMark { person.keyframeMark = 0 }

        guard seen.stalled else {
            guard person.rung != .none else { return [] }
            // A receiver counts its rebuilt screen's count going back to zero as movement and
            // clears its report; with nothing decoded on the new screen that is not a recovery,
            // and the climb goes on from where it is when the report comes back.
            if person.rung >= .rebuild, seen.framesDecoded == 0 { return [] }
            let was = person.rung
            person.rung = .none
            person.firstKeyframeAt = nil
            person.heldSaid = false
            var steps = [
                LadderStep(.recovered(id), reason: "\(name) no longer reports the screen stalled (was at \(was))")
            ]
            if person.notice != nil {
                person.notice = nil
                steps.append(LadderStep(.notice(id, nil), reason: "\(name)'s view is moving again"))
            }
            return steps
        }

        switch person.rung {
        case .none:
            person.rung = .keyframes
            person.lastStepAt = now
            person.lastKeyframeRequestAt = now
            person.firstKeyframeAt = nil
            person.keyframeMark = seen.keyframesSent
            person.sentMark = seen.framesSent
            person.heldSaid = false
            return [LadderStep(.requestKeyframe(id), reason: "\(name) reports the screen stalled")]
                + notice(id, &person, Notice.recovering(name), reason: "\(name) reports the screen stalled")

        case .keyframes:
            if person.firstKeyframeAt == nil, seen.keyframesSent > person.keyframeMark {
                person.firstKeyframeAt = now
            }
            var steps: [LadderStep] = []
            if let first = person.firstKeyframeAt, now - first >= Self.rebuildAfter {
                let reason =
                    "\(name) still reports the screen stalled \(SenderLadder.seconds(now - first)) after the first keyframe left"
                if let held = holdWithoutFrames(id, &person, seen, step: "rebuild", after: "the keyframes") {
                    steps = held
                } else if let last = person.lastRebuildAt, now - last < Self.rebuildEvery {
                    advance(&person, to: .rebuild, seen, now: now)
                    return [
                        LadderStep(
                            .held(id, step: "rebuild"),
                            reason:
                                "\(reason); no rebuild: the last one for \(name) was \(SenderLadder.seconds(now - last)) ago (at most once a minute)"
                        )
                    ]
                } else {
                    advance(&person, to: .rebuild, seen, now: now)
                    person.lastRebuildAt = now
                    return [LadderStep(.rebuild(id), reason: reason)]
                        + notice(id, &person, Notice.restarting(name), reason: "rebuilding the screen for \(name)")
                }
            }
            if let asked = person.lastKeyframeRequestAt, now - asked >= Self.keyframeRepeat {
                person.lastKeyframeRequestAt = now
                let why =
                    person.firstKeyframeAt == nil
                    ? "no keyframe has left for \(name) yet" : "\(name) still reports the screen stalled"
                steps.append(LadderStep(.requestKeyframe(id), reason: why))
            }
            return steps

        case .rebuild:
            guard let at = person.lastStepAt, now - at >= Self.shareAgainAfter else { return [] }
            let reason = "\(name) still reports the screen stalled \(SenderLadder.seconds(now - at)) after the rebuild"
            if let held = holdWithoutFrames(id, &person, seen, step: "shareAgain", after: "the rebuild") { return held }
            if let last = lastShareAgainAt, now - last < Self.shareAgainEvery {
                advance(&person, to: .shareAgain, seen, now: now)
                return [
                    LadderStep(
                        .held(id, step: "shareAgain"),
                        reason:
                            "\(reason); no share again: the last was \(SenderLadder.seconds(now - last)) ago (at most once every five minutes)"
                    )
                ]
            }
            advance(&person, to: .shareAgain, seen, now: now)
            lastShareAgainAt = now
            return [LadderStep(.shareAgain, reason: reason)]
                + notice(id, &person, Notice.restarting(name), reason: "sharing again for \(name)")

        case .shareAgain:
            guard let at = person.lastStepAt, now - at >= Self.giveUpAfter else { return [] }
            advance(&person, to: .giveUp, seen, now: now)
            return [
                LadderStep(
                    .giveUp(id),
                    reason:
                        "\(name) still reports the screen stalled \(SenderLadder.seconds(now - at)) after the share again"
                )
            ]
                + notice(id, &person, Notice.gaveUp(name), reason: "nothing restored \(name)'s view")

        case .giveUp:
            return []
        }
    }

    /// Rebuild and share again need frames to have left for the person since the last step.
    private func holdWithoutFrames(
        _ id: String, _ person: inout Person, _ seen: PersonObservation,
        step: String, after: String
    ) -> [LadderStep]? {
        guard seen.framesSent <= person.sentMark else { return nil }
        guard !person.heldSaid else { return [] }
        person.heldSaid = true
        return [
            LadderStep(
                .held(id, step: step),
                reason:
                    "no \(step) for \(seen.name): no frames left for them since \(after) (the screen is not leaving here)"
            )
        ]
    }

    private func advance(_ person: inout Person, to rung: Rung, _ seen: PersonObservation, now: ContinuousClock.Instant)
    {
        person.rung = rung
        person.lastStepAt = now
        person.sentMark = seen.framesSent
        person.keyframeMark = seen.keyframesSent
        person.heldSaid = false
    }

    private func notice(_ id: String, _ person: inout Person, _ text: String, reason: String) -> [LadderStep] {
        guard person.notice != text else { return [] }
        person.notice = text
        return [LadderStep(.notice(id, text), reason: reason)]
    }
}

/// What the sharer knows of one person each second.
public struct PersonObservation: Sendable, Equatable {
    /// The name notices use.
    public var name: String
    /// Their latest media report lists this sharer's screen as stalled.
    public var stalled: Bool
    /// Video frames and keyframes that left for this person (they start again at a rebuild).
    public var framesSent: Int
    public var keyframesSent: Int
    /// The frames of our screen they say they decoded (nil: not said). After a rebuild or a
    /// share again the count starts from zero.
    public var framesDecoded: Int?

    public init(name: String, stalled: Bool, framesSent: Int, keyframesSent: Int, framesDecoded: Int? = nil) {
        self.name = name
        self.stalled = stalled
        self.framesSent = framesSent
        self.keyframesSent = keyframesSent
        self.framesDecoded = framesDecoded
    }
}
