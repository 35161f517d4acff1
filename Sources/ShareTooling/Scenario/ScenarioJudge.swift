import ScreenWatchdog
import StatsLine
/// What a scenario run saw, in scenario time (seconds from its start): the faults put in, each
/// viewer's view of each sharer's screen, the cameras, the sharers' watchdog and the lines they
/// printed. `sharectl scenario run` fills it from the processes' `--stats-json` files and output;
/// `ScenarioJudge` decides each expectation from it alone (no clock, no files), so the rules are
/// tested on made-up records.
public struct ScenarioRecord: Sendable {
    /// One look at a view: `framesDecoded` nil when the screen (or camera) is not there.
    public struct ViewSample: Sendable, Equatable {
        public var t: Double
        public var framesDecoded: Int?
        public var width: Int
        public var height: Int

        public init(t: Double, framesDecoded: Int?, width: Int = 0, height: Int = 0) {
            self.t = t
            self.framesDecoded = framesDecoded
            self.width = width
            self.height = height
        }
    }

    /// One look at a sharer's watchdog (`watchdog.*` of its stats line).
    public struct WatchdogSample: Sendable, Equatable {
        public var t: Double
        public var rung: String
        public var steps: [WatchdogStatus.Step]
        public var notices: [String]

        public init(t: Double, rung: String, steps: [WatchdogStatus.Step], notices: [String]) {
            self.t = t
            self.rung = rung
            self.steps = steps
            self.notices = notices
        }
    }

    public struct Line: Sendable, Equatable {
        public var t: Double
        public var text: String

        public init(t: Double, text: String) {
            self.t = t
            self.text = text
        }
    }

    /// A fault put in: which (index in `faults`) and when.
    public struct Injection: Sendable, Equatable {
        public var fault: Int
        public var t: Double

        public init(fault: Int, t: Double) {
            self.fault = fault
            self.t = t
        }
    }

    /// viewer → sharer → looks at that sharer's screen.
    public var screens: [String: [String: [ViewSample]]] = [:]
    /// sharer → looks at its camera (as a viewer decodes it, or as it is sent).
    public var cameras: [String: [ViewSample]] = [:]
    /// sharer → its watchdog.
    public var watchdog: [String: [WatchdogSample]] = [:]
    /// participant → the lines it printed.
    public var lines: [String: [Line]] = [:]
    public var injections: [Injection] = []
    /// When the run ended.
    public var end = 0.0

    public init() {}
}

/// One expectation judged: met or not, and the figure it was judged on.
public struct ScenarioVerdict: Sendable, Equatable {
    public var index: Int
    public var met: Bool
    public var figure: String

    public init(index: Int, met: Bool, figure: String) {
        self.index = index
        self.met = met
        self.figure = figure
    }
}

/// Judges a scenario's expectations from what the run saw.
public enum ScenarioJudge {
    /// A view counts as standing still when its decoded count does not change between two looks
    /// this far apart or more (the stats come once a second; two lines read at once are not a
    /// second apart).
    static let stillAfter = 0.5
    /// A view stood still after a fault when it did for this long at least.
    static let minimumStill = 2.0

    /// The ladders' rungs in order; a rung reached means every rung below it in its ladder too.
    static let ladders: [[String]] = [
        ["keyframe", "freshEncoder", "newTransceiver"],
        ["keyframes", "rebuild", "shareAgain", "giveUp"],
        ["restartCapture"]
    ]
    /// Step actions that are steps of a ladder (not notices, holds or recoveries).
    static let stepActions: Set<String> = [
        "restartCapture", "keyframe", "freshEncoder", "newTransceiver", "rebuild",
        "shareAgain", "giveUp"
    ]

    /// Expectations that, once met, stay met whatever comes later in the run.
    static let metOnceStaysMet: Set<Scenario.ExpectationKind> = [
        .viewRestored, .viewRestoredOrGiveUp, .giveUpNotice, .noticeShown, .watchdogReaches
    ]

    /// How long a sharer's watchdog stays at rest, after its last step and the last fault's action,
    /// before a run whose only whole-run expectations are `watchdogStaysBelow` may end: a view that
    /// wedges again is reported stalled, and a step taken, within about 4 s (the stall reports come
    /// from the viewer once a second), so a relapse shows well inside it.
    public static let quietToEnd = 10.0

    /// Whether a run may end before its length although some expectations are about the whole run:
    /// every one of them is `watchdogStaysBelow` (the rest stay met once met), and each sharer they
    /// name has its watchdog at rest (rung `none`), with no step since `quietToEnd` before `now`,
    /// nor any of the faults' actions (`lastAction`). The caller ends the run only when every
    /// expectation is met as well; what could still change a verdict is a new climb, and that
    /// starts with a step.
    public static func quietEnough(
        _ scenario: Scenario, _ record: ScenarioRecord, lastAction: Double, now: Double
    ) -> Bool {
        let below = scenario.expect.filter { $0.kind == .watchdogStaysBelow }
        guard !below.isEmpty,
            scenario.expect.allSatisfy({ metOnceStaysMet.contains($0.kind) || $0.kind == .watchdogStaysBelow })
        else { return false }
        guard now - lastAction >= quietToEnd else { return false }
        for e in below {
            let sharer = e.sharer ?? scenario.start.sharers[0].name
            let samples = record.watchdog[sharer] ?? []
            // (A browser sharer's watchdog line comes when it changes, so the last may be old.)
            guard let last = samples.last, last.rung == "none" else { return false }
            var seen = Set<Int>(), lastActivity = -Double.infinity
            for sample in samples {
                let fresh = sample.steps.contains { seen.insert($0.number).inserted }
                if fresh || sample.rung != "none" { lastActivity = sample.t }
            }
            if now - lastActivity < quietToEnd { return false }
        }
        return true
    }

    public static func judge(_ scenario: Scenario, _ record: ScenarioRecord) -> [ScenarioVerdict] {
        scenario.expect.enumerated().map { index, expectation in
            let (met, figure) = judge(expectation, in: scenario, record)
            return ScenarioVerdict(index: index, met: met, figure: figure)
        }
    }

    static func judge(_ e: Scenario.Expectation, in scenario: Scenario, _ record: ScenarioRecord) -> (Bool, String) {
        let sharer = e.sharer ?? e.fault.flatMap { scenario.faults[$0].screenOf } ?? scenario.start.sharers[0].name
        let starts = startTimes(e, record)
        switch e.kind {
        case .viewRestored, .viewRestoredOrGiveUp:
            guard let viewer = e.viewer, let within = e.within else { return (false, "no viewer or time given") }
            let screenOf = e.fault.flatMap { scenario.faults[$0].screenOf } ?? sharer
            guard !starts.isEmpty else { return (false, "the fault was never put in") }
            var figures: [String] = [], met = true
            for start in starts {
                let samples = record.screens[viewer]?[screenOf] ?? []
                let restored = restoration(samples, after: start, within: within)
                var ok = restored.met
                var figure = restored.figure
                if !ok, e.kind == .viewRestoredOrGiveUp {
                    let notice = ReceiverLadder.Notice.gaveUp(viewer)
                    if let seen = noticeTime(notice, sharer: sharer, record, from: start), seen <= start + within {
                        ok = true
                        figure += "; the give-up notice at \(n(seen)) s (\(n(seen - start)) s after the fault)"
                    } else {
                        figure += "; no give-up notice"
                    }
                }
                met = met && ok
                figures.append(figure)
            }
            return (met, figures.joined(separator: "; "))
        case .giveUpNotice, .noticeShown:
            let text = e.kind == .giveUpNotice ? ReceiverLadder.Notice.gaveUp(e.viewer ?? "?") : (e.text ?? "")
            let within = e.within ?? record.end
            var figures: [String] = [], met = true
            for start in starts.isEmpty ? [0] : starts {
                if let seen = noticeTime(text, sharer: sharer, record, from: start), seen <= start + within {
                    figures.append(
                        "shown at \(n(seen)) s (\(n(seen - start)) s after \(e.fault == nil ? "the start" : "the fault"))"
                    )
                } else {
                    met = false
                    let later = noticeTime(text, sharer: sharer, record, from: start)
                    figures.append(later.map { "shown only at \(n($0)) s (\(n($0 - start)) s after)" } ?? "never shown")
                }
            }
            return (met, figures.joined(separator: "; "))
        case .watchdogReaches:
            guard let rung = e.rung else { return (false, "no rung given") }
            let start = starts.first ?? 0
            let samples = record.watchdog[sharer] ?? []
            guard let (t, how) = reached(rung, samples, from: start) else {
                return (false, "never reached (highest: \(highest(samples)))")
            }
            if let within = e.within, t > start + within {
                return (
                    false,
                    "reached only at \(n(t)) s, \(n(t - start)) s after \(e.fault == nil ? "the start" : "the fault") (\(how))"
                )
            }
            return (
                true,
                "reached at \(n(t)) s, \(n(t - start)) s after \(e.fault == nil ? "the start" : "the fault") (\(how))"
            )
        case .watchdogStaysBelow:
            guard let rung = e.rung else { return (false, "no rung given") }
            let samples = record.watchdog[sharer] ?? []
            guard !samples.isEmpty else { return (false, "\(sharer) wrote no watchdog figures") }
            let rule = rung == "keyframe" || rung == "keyframes" || rung == "restartCapture"
            if rule, let step = allSteps(samples).first {
                return (false, "a step was taken: \(step.action) at \(n(step.t)) s of the share (\(step.reason))")
            }
            if !rule, let (t, how) = reached(rung, samples, from: 0) {
                return (false, "reached at \(n(t)) s (\(how))")
            }
            return (true, "highest: \(highest(samples)), \(allSteps(samples).count) steps")
        case .minFrameRate:
            guard let viewer = e.viewer, let fps = e.fps else { return (false, "no viewer or rate given") }
            let settle = e.settle ?? 0
            let samples = (record.screens[viewer]?[sharer] ?? []).filter { $0.t >= settle }
            guard let rate = averageRate(samples) else { return (false, "no figures after \(n(settle)) s") }
            let worst = worstWindowRate(samples, window: 5)
            let text = "\(n(rate)) fps on average from \(n(settle)) s (slowest 5 s: \(worst.map(n) ?? "?") fps)"
            return (rate >= fps, text)
        case .minResolution:
            guard let viewer = e.viewer else { return (false, "no viewer given") }
            let samples = (record.screens[viewer]?[sharer] ?? []).filter { ($0.framesDecoded ?? 0) > 0 }
            guard let last = samples.last else { return (false, "nothing decoded") }
            return (
                last.width >= (e.width ?? 0) && last.height >= (e.height ?? 0),
                "\(last.width)×\(last.height) at the end"
            )
        case .noStallLongerThan:
            guard let viewer = e.viewer, let limit = e.seconds else { return (false, "no viewer or time given") }
            let samples = record.screens[viewer]?[sharer] ?? []
            guard let first = samples.firstIndex(where: { ($0.framesDecoded ?? 0) > 0 }) else {
                return (false, "\(viewer) decoded nothing of \(sharer)'s screen")
            }
            let (longest, from) = longestStill(Array(samples[first...]))
            return (
                longest <= limit,
                "longest stretch without a new frame about \(n(longest)) s"
                    + (longest > 0 ? " (from \(n(from)) s)" : "")
            )
        case .cameraRecovered:
            guard let within = e.within else { return (false, "no time given") }
            guard !starts.isEmpty else { return (false, "the fault was never put in") }
            let samples = record.cameras[sharer] ?? []
            let results = starts.map { restoration(samples, after: $0, within: within) }
            return (results.allSatisfy(\.met), results.map(\.figure).joined(separator: "; "))
        }
    }

    /// The times an expectation counts from: its fault's injections, or the start.
    static func startTimes(_ e: Scenario.Expectation, _ record: ScenarioRecord) -> [Double] {
        guard let fault = e.fault else { return [0] }
        return record.injections.filter { $0.fault == fault }.map(\.t)
    }

    /// Frames a second between two looks (a count that starts again from zero counts from zero),
    /// nil when the view is not there or the looks are too close together to say.
    public static func rate(from previous: ScenarioRecord.ViewSample, to sample: ScenarioRecord.ViewSample) -> Double? {
        guard let count = sample.framesDecoded else { return 0 }
        guard sample.t - previous.t >= stillAfter else { return nil }
        let before = previous.framesDecoded ?? 0
        return Double(count >= before ? count - before : count) / (sample.t - previous.t)
    }

    /// What counts as moving: a quarter of the view's usual rate in the `span` seconds before
    /// `t`, and at least 2 fps, so a stalled capture's once-a-second repeat of its last frame is
    /// standing still, not moving.
    public static func movingRate(_ samples: [ScenarioRecord.ViewSample], before t: Double, span: Double = 6) -> Double
    {
        let window = samples.filter { $0.t <= t && $0.t >= t - span }
        let rates = zip(window, window.dropFirst()).compactMap { rate(from: $0, to: $1) }.sorted()
        guard !rates.isEmpty else { return 2 }
        return max(2, rates[rates.count / 2] / 4)
    }

    /// A view stood still after `start` (or went) and then moved again by `start + within`.
    static func restoration(
        _ samples: [ScenarioRecord.ViewSample], after start: Double,
        within: Double
    ) -> (met: Bool, figure: String) {
        let threshold = movingRate(samples, before: start)
        let before = samples.last { $0.t <= start }
        let after = samples.filter { $0.t > start }
        var previous = before
        var stoppedAt: Double?
        var stoodStill = false
        for sample in after {
            guard let last = previous else { previous = sample; continue }
            guard let rate = rate(from: last, to: sample) else { continue }
            previous = sample
            let moving = rate >= threshold
            if let still = stoppedAt, moving {
                guard stoodStill else {
                    // A look that repeated the one before (reports and stats lines a second
                    // apart can miss each other) is not a stall.
                    stoppedAt = nil
                    continue
                }
                let delay = sample.t - start
                let figure =
                    "stood still from \(n(still)) s, moving again at \(n(sample.t)) s (\(n(delay)) s after the fault, "
                    + "\(n(rate)) fps)"
                return (delay <= within, delay <= within ? figure : figure + ", later than \(n(within)) s")
            }
            if !moving {
                if stoppedAt == nil { stoppedAt = last.t }
                if let still = stoppedAt, sample.t - still >= minimumStill { stoodStill = true }
            } else if sample.t - start > within {
                break
            }
        }
        guard let stoppedAt, stoodStill else {
            let frames = (after.last?.framesDecoded ?? 0) - (before?.framesDecoded ?? 0)
            return (
                false,
                after.isEmpty
                    ? "no figures after the fault"
                    : "the view never stood still after the fault (\(frames) more frames decoded): the fault did not take effect"
            )
        }
        return (
            false,
            "stood still from \(n(stoppedAt)) s and did not move again (over \(n(threshold)) fps) by \(n(after.last?.t ?? stoppedAt)) s"
        )
    }

    /// The first time the rung (or one above it in its ladder) shows, at or after `start`.
    static func reached(
        _ rung: String, _ samples: [ScenarioRecord.WatchdogSample],
        from start: Double
    ) -> (Double, String)? {
        let ladder = ladders.first { $0.contains(rung) } ?? [rung]
        let atOrAbove = Set(ladder.drop { $0 != rung })
        // Receiver-driven keyframes are steps named "keyframe" too.
        let actions = rung == "keyframes" ? atOrAbove.union(["keyframe"]) : atOrAbove
        for sample in samples where sample.t >= start {
            if atOrAbove.contains(sample.rung) { return (sample.t, "watchdog.rung \(sample.rung)") }
            if let step = sample.steps.first(where: { actions.contains($0.action) && isNew($0, before: start, samples) }
            ) {
                return (
                    sample.t, "step \(step.number) \(step.action)\(step.subject.map { " \($0)" } ?? ""): \(step.reason)"
                )
            }
        }
        return nil
    }

    /// A step not already listed before `start` (the list carries the last few steps).
    static func isNew(_ step: WatchdogStatus.Step, before start: Double, _ samples: [ScenarioRecord.WatchdogSample])
        -> Bool
    {
        !samples.contains { $0.t < start && $0.steps.contains { $0.number == step.number } }
    }

    static func allSteps(_ samples: [ScenarioRecord.WatchdogSample]) -> [WatchdogStatus.Step] {
        var seen = Set<Int>(), steps: [WatchdogStatus.Step] = []
        for sample in samples {
            for step in sample.steps where stepActions.contains(step.action) && seen.insert(step.number).inserted {
                steps.append(step)
            }
        }
        return steps
    }

    static func highest(_ samples: [ScenarioRecord.WatchdogSample]) -> String {
        let steps = allSteps(samples).map(\.action)
        var best = "none"
        for ladder in ladders {
            for rung in ladder.reversed() where steps.contains(rung) || samples.contains(where: { $0.rung == rung }) {
                best = best == "none" ? rung : "\(best), \(rung)"
                break
            }
        }
        return best
    }

    /// When `text` first showed among the sharer's notices or printed lines, at or after `start`.
    /// A fault noted by the runner and what a process printed about it are stamped by different
    /// clocks half a second apart at worst (a camera's script starts with its process): a notice
    /// up to `skew` before the fault's note still answers it.
    static let skew = 0.5

    static func noticeTime(_ text: String, sharer: String, _ record: ScenarioRecord, from start: Double) -> Double? {
        let earliest = start - skew
        let fromStats = record.watchdog[sharer]?.first {
            $0.t >= earliest && $0.notices.contains { $0.contains(text) }
        }?.t
        let fromLines = record.lines[sharer]?.first { $0.t >= earliest && $0.text.contains(text) }?.t
        return [fromStats, fromLines].compactMap { $0 }.min()
    }

    static func averageRate(_ samples: [ScenarioRecord.ViewSample]) -> Double? {
        let counted = samples.filter { $0.framesDecoded != nil }
        guard let first = counted.first, let last = counted.last, last.t - first.t >= 1 else { return nil }
        return frames(counted) / (last.t - first.t)
    }

    /// Frames decoded over a stretch, counting a count that starts again from zero (a new screen).
    static func frames(_ samples: [ScenarioRecord.ViewSample]) -> Double {
        var total = 0, previous: Int?
        for sample in samples {
            guard let count = sample.framesDecoded else { previous = nil; continue }
            if let previous { total += count >= previous ? count - previous : count }
            previous = count
        }
        return Double(total)
    }

    static func worstWindowRate(_ samples: [ScenarioRecord.ViewSample], window: Double) -> Double? {
        var worst: Double?
        for (index, first) in samples.enumerated() {
            guard let end = samples[index...].firstIndex(where: { $0.t - first.t >= window }) else { break }
            let stretch = Array(samples[index...end])
            let rate = frames(stretch) / (samples[end].t - first.t)
            worst = min(worst ?? rate, rate)
        }
        return worst
    }

    /// The longest time between two looks that saw the view moving (see `movingRate`), less the
    /// time between looks, and when it began: how long the picture stood still, to within a look.
    static func longestStill(_ samples: [ScenarioRecord.ViewSample]) -> (Double, Double) {
        let threshold = movingRate(samples, before: samples.last?.t ?? 0, span: .infinity)
        var longest = 0.0, from = 0.0
        var lastChange = samples.first
        var previous = samples.first
        for sample in samples.dropFirst() {
            guard let before = previous, let rate = rate(from: before, to: sample) else { continue }
            previous = sample
            if rate >= threshold, let change = lastChange {
                let still = sample.t - change.t - (sample.t - before.t)
                if still > longest { (longest, from) = (still, change.t) }
                lastChange = sample
            }
        }
        if let change = lastChange, let last = samples.last, last.t - change.t > longest {
            (longest, from) = (last.t - change.t, change.t)
        }
        return (longest, from)
    }

    static func n(_ value: Double) -> String { tenths(value) }

    /// A figure to a tenth, without a trailing `.0`: `12`, `3.5`.
    public static func tenths(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
