import ScreenWatchdog
import Testing

/// Timelines, one character a second, per person:
///   `-` no stall reported, frames leave    `s` stall reported, frames leave
///   `k` stall reported, frames leave, one of them a keyframe
///   `x` stall reported, nothing leaves     `0` stall reported, the counters start again from zero
///       (a rebuilt transceiver), frames leave
///   `c` no stall reported, but their count of our (rebuilt) screen says 0 decoded, frames leave
///   `.` not in the call
/// The expected line: `-` no step, `K` keyframe, `R` rebuild, `A` share again, `G` give up,
/// `h` a due step held or skipped, `r` recovered (notices are checked on their own).
@Suite struct ReceiverLadderTests {
    struct Person {
        var name: String
        var framesSent = 0
        var keyframesSent = 0
    }

    struct Run {
        var marbles: [String: String] = [:]
        var steps: [LadderStep] = []
        var notices: [String] = []
        var ladder = ReceiverLadder()
    }

    /// `timelines`: person id → timeline; all as long as the first.
    func run(
        _ timelines: [String: String], names: [String: String] = [:], ladder: ReceiverLadder = ReceiverLadder(),
        startAt: ContinuousClock.Instant = ContinuousClock.now
    ) -> Run {
        var result = Run(ladder: ladder)
        var people = timelines.keys.reduce(into: [String: Person]()) {
            $0[$1] = Person(name: names[$1] ?? ($1.prefix(1).uppercased() + $1.dropFirst()))
        }
        let length = timelines.values.map(\.count).max() ?? 0
        for second in 0..<length {
            var observed: [String: PersonObservation] = [:]
            for (id, timeline) in timelines {
                let event = Array(timeline)[second]
                if event == "." { continue }
                var person = people[id]!
                if event == "0" { person.framesSent = 0; person.keyframesSent = 0 }
                if event != "x" { person.framesSent += 30 }
                if event == "k" { person.keyframesSent += 1 }
                people[id] = person
                observed[id] = PersonObservation(
                    name: person.name, stalled: event != "-" && event != "c",
                    framesSent: person.framesSent, keyframesSent: person.keyframesSent,
                    framesDecoded: event == "c" ? 0 : nil)
            }
            let steps = result.ladder.tick(now: startAt + .seconds(second), people: observed)
            result.steps += steps
            for id in timelines.keys.sorted() {
                // A share again is for everyone; it is marked on the line of the person it was for.
                let marks = steps.filter {
                    $0.action.subject == id || $0.action == .shareAgain && $0.reason.hasPrefix(people[id]!.name)
                }
                .compactMap { step -> String? in
                    switch step.action {
                    case .requestKeyframe: "K"
                    case .rebuild: "R"
                    case .shareAgain: "A"
                    case .giveUp: "G"
                    case .held: "h"
                    case .recovered: "r"
                    case .notice: nil
                    default: "?"
                    }
                }
                result.marbles[id, default: ""] +=
                    marks.isEmpty ? "-" : marks.count == 1 ? marks[0] : "(\(marks.joined()))"
            }
            for step in steps {
                if case .notice(_, let text) = step.action { result.notices.append(text ?? "(cleared)") }
            }
        }
        return result
    }

    func single(_ timeline: String) -> Run { run(["bea": timeline]) }

    static let stalledLong = "sk" + String(repeating: "s", count: 28)

    @Test func aStallThatNothingMendsClimbsEveryRungAndGivesUp() {
        let run = single(Self.stalledLong)
        // Keyframes at once and every 2 s; the first left at 1 s, so the rebuild is at 7 s, the
        // share again 10 s later, the give-up 10 s after that.
        #expect(run.marbles["bea"] == "K-K-K-KR---------A---------G--")
        #expect(
            run.notices == [
                "Bea's view of your screen stalled — recovering",
                "Restarting your share for Bea…",
                "Couldn't restore Bea's view — try Stop and Share again"
            ])
        #expect(run.ladder.rung(of: "bea") == .giveUp)
        #expect(
            run.steps.first { $0.action == .rebuild("bea") }?.reason
                == "Bea still reports the screen stalled 6 s after the first keyframe left")
    }

    @Test func aKeyframeThatMendsTheViewEndsTheLadderAndTheNotice() {
        let run = single("sk--")
        #expect(run.marbles["bea"] == "K-r-")
        #expect(run.notices == ["Bea's view of your screen stalled — recovering", "(cleared)"])
        #expect(run.ladder.notices.isEmpty)
    }

    @Test func aRebuildThatMendsTheViewEndsTheLadder() {
        let run = single("sksssssss0ss---")
        #expect(run.marbles["bea"] == "K-K-K-KR----r--")
        #expect(run.ladder.rung == .none)
    }

    /// A sticky wedge: the rebuilt screen decodes nothing either, but the viewer counts its count
    /// going back to zero as movement and clears its report for a while. That is not a recovery:
    /// the ladder keeps its rung, and the share again comes 10 s after the rebuild.
    @Test func aReportClearedOnlyByTheRebuildsZeroDoesNotEndTheLadder() {
        let run = single("sksssssss0cccssssssssssss")
        #expect(run.marbles["bea"] == "K-K-K-KR---------A-------")
        #expect(!run.steps.contains { $0.action == .recovered("bea") })
    }

    @Test func theSixSecondsCountFromTheFirstKeyframeThatLeft() {
        #expect(single("ssssksssssss").marbles["bea"] == "K-K-K-K-K-R-", "the keyframe left at 4 s: rebuild at 10 s")
        #expect(
            single(String(repeating: "s", count: 20)).marbles["bea"] == "K-K-K-K-K-K-K-K-K-K-",
            "no keyframe ever left: no rebuild (the sender's watchdog owns a screen that does not leave)")
    }

    @Test func noShareAgainUnlessFramesLeftSinceTheRebuild() {
        // After the rebuild nothing leaves for Bea: the share again waits (said once), and is
        // taken the second frames leave again; the give-up follows 10 s after it.
        let run = single("sk" + "ssssss" + String(repeating: "x", count: 12) + String(repeating: "s", count: 12))
        #expect(run.marbles["bea"] == "K-K-K-KR---------h--A---------G-")
        #expect(
            run.steps.first { $0.action == LadderAction.held("bea", step: "shareAgain") }?.reason
                == "no shareAgain for Bea: no frames left for them since the rebuild (the screen is not leaving here)")
    }

    @Test func framesCountedFromZeroAfterTheRebuildStillCountAsLeaving() {
        let timeline = "sksssssss0" + String(repeating: "s", count: 8)
        #expect(single(timeline).marbles["bea"] == "K-K-K-KR---------A")
    }

    @Test func aRebuildAtMostOnceAMinutePerPerson() {
        // Rebuilt at 7 s, mended at 9 s; stalls again at 11 s: its rebuild would be at 18 s, 11 s
        // after the last, so it is skipped and the share again comes at its usual time (28 s).
        let first = "sksssssss--"
        let second = "sk" + String(repeating: "s", count: 16)
        let run = single(first + second)
        #expect(run.marbles["bea"] == "K-K-K-KR-r-" + "K-K-K-Kh---------A")
        #expect(
            run.steps.first { $0.action == .held("bea", step: "rebuild") }?.reason
                == "Bea still reports the screen stalled 6 s after the first keyframe left; no rebuild: the last one for Bea was 11 s ago (at most once a minute)"
        )
    }

    @Test func aRebuildIsAllowedAgainAfterAMinute() {
        let mended = "skssssss" + String(repeating: "-", count: 60)
        let run = single(mended + "skssssss")
        #expect(run.marbles["bea"] == "K-K-K-KR" + "r" + String(repeating: "-", count: 59) + "K-K-K-KR")
    }

    @Test func theRebuildLimitIsPerPerson() {
        let bea = "skssssss-----" + String(repeating: "-", count: 8)
        let cal = "------" + "sksssssss" + "------"
        let run = run(["bea": bea, "cal": cal])
        #expect(run.marbles["bea"] == "K-K-K-KRr------------")
        #expect(run.marbles["cal"] == "------K-K-K-KR-r-----", "Cal's rebuild 6 s after Bea's is not held")
    }

    @Test func aShareAgainAtMostOnceEveryFiveMinutesForEveryone() {
        // Bea's ladder shares again at 17 s and gives up at 27 s; mended at 30 s. Cal stalls at
        // 100 s: rebuild allowed, but the share again (at ~117 s) is not, so it is skipped and
        // the give-up comes 10 s later.
        let bea = Self.stalledLong + String(repeating: "-", count: 100)
        let cal = String(repeating: "-", count: 100) + "sk" + String(repeating: "s", count: 28)
        let run = run(["bea": bea, "cal": cal])
        #expect(run.marbles["bea"]!.hasPrefix("K-K-K-KR---------A---------G--r"))
        #expect(run.marbles["cal"]!.hasSuffix("K-K-K-KR---------h---------G--"))
        #expect(run.steps.filter { $0.action == .shareAgain }.count == 1)
        #expect(
            run.steps.first { $0.action == .held("cal", step: "shareAgain") }?.reason
                == "Cal still reports the screen stalled 10 s after the rebuild; no share again: the last was 100 s ago (at most once every five minutes)"
        )
        #expect(run.notices.last == "Couldn't restore Cal's view — try Stop and Share again")
    }

    @Test func aShareAgainIsAllowedAgainAfterFiveMinutes() {
        let start = ContinuousClock.now
        var first = single(Self.stalledLong + "-")
        #expect(first.marbles["bea"]!.contains("A"))
        // The same ladder, 300 s after the share again at 17 s.
        let later = run(["bea": Self.stalledLong], ladder: first.ladder, startAt: start + .seconds(317))
        #expect(later.marbles["bea"] == "K-K-K-KR---------A---------G--")
        first = single(Self.stalledLong + "-")
        let tooSoon = run(["bea": Self.stalledLong], ladder: first.ladder, startAt: start + .seconds(300))
        #expect(tooSoon.marbles["bea"] == "K-K-K-KR---------h---------G--")
    }

    @Test func someoneLeavingTakesTheirNoticeAway() {
        var ladder = ReceiverLadder()
        let now = ContinuousClock.now
        _ = ladder.tick(
            now: now, people: ["bea": PersonObservation(name: "Bea", stalled: true, framesSent: 1, keyframesSent: 0)])
        #expect(ladder.notices == ["bea": "Bea's view of your screen stalled — recovering"])
        let steps = ladder.tick(now: now + .seconds(1), people: [:])
        #expect(steps.map(\.action) == [.notice("bea", nil)])
        #expect(ladder.notices.isEmpty)
    }
}
