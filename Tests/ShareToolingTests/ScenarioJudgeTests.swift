import Foundation
import ShareTooling
import StatsLine
import Testing
@testable import ScreenWatchdog

/// The judge on made-up records: looks once a second, a view that moves (`m`), stands still
/// (`-`) or is gone (`x`), written like marble diagrams from t = 0.
@Suite struct ScenarioJudgeTests {
    static let text = """
        {
          "name": "x", "summary": "s", "duration": 60,
          "start": { "server": true, "sharers": [{ "name": "ana" }], "viewers": [{ "name": "bea" }] },
          "faults": [{ "kind": "decoderWedge", "at": 10, "target": "bea" }],
          "expect": [
            { "kind": "viewRestored", "viewer": "bea", "fault": 0, "within": 20 },
            { "kind": "viewRestoredOrGiveUp", "viewer": "bea", "fault": 0, "within": 20 },
            { "kind": "watchdogReaches", "rung": "rebuild", "fault": 0, "within": 15 },
            { "kind": "watchdogStaysBelow", "rung": "shareAgain" },
            { "kind": "noticeShown", "text": "bea's view of your screen stalled — recovering", "fault": 0, "within": 8 },
            { "kind": "noStallLongerThan", "viewer": "bea", "seconds": 3 },
            { "kind": "minFrameRate", "viewer": "bea", "fps": 15, "settle": 2 },
            { "kind": "watchdogStaysBelow", "rung": "keyframe" }
          ]
        }
        """

    let scenario: Scenario

    init() throws {
        scenario = try ScenarioParser.parse(Data(Self.text.utf8), file: "x.json", expectedName: "x")
    }

    /// `m` adds 30 frames, `-` none, `r` one (a stalled capture repeats its last frame once a
    /// second), `x` the screen is gone, `0` a new screen starting from zero (25 frames in).
    func view(_ marbles: String) -> [ScenarioRecord.ViewSample] {
        var count = 0
        return marbles.enumerated().map { index, marble in
            switch marble {
            case "m": count += 30
            case "r": count += 1
            case "0": count = 25
            default: break
            }
            return ScenarioRecord.ViewSample(
                t: Double(index), framesDecoded: marble == "x" ? nil : count, width: 1280, height: 720)
        }
    }

    func record(
        _ marbles: String, steps: [(Double, String)] = [], notices: [(Double, String)] = [],
        injected: Double? = 10
    ) -> ScenarioRecord {
        var record = ScenarioRecord()
        record.screens["bea"] = ["ana": view(marbles)]
        var list: [WatchdogStatus.Step] = []
        record.watchdog["ana"] = (0..<marbles.count).map { second in
            let t = Double(second)
            for (number, step) in steps.enumerated() where step.0 == t {
                list.append(
                    WatchdogStatus.Step(number: number + 1, t: t, action: step.1, subject: "bea", reason: "test"))
            }
            let showing = notices.filter { $0.0 <= t && t < $0.0 + 3 }.map(\.1)
            return ScenarioRecord.WatchdogSample(t: t, rung: "none", steps: Array(list.suffix(8)), notices: showing)
        }
        if let injected { record.injections = [ScenarioRecord.Injection(fault: 0, t: injected)] }
        record.end = Double(marbles.count)
        return record
    }

    func verdicts(_ record: ScenarioRecord) -> [Bool] { ScenarioJudge.judge(scenario, record).map(\.met) }

    @Test func aWedgeMendedByARebuild() {
        //                       0         1         2         3
        //                       0123456789012345678901234567890123
        let seen = record(
            "mmmmmmmmmmm---------0mmmmmmmmmmmmmmm",
            steps: [(15, "keyframe"), (21, "rebuild")],
            notices: [(15, "bea's view of your screen stalled — recovering")])
        let judged = ScenarioJudge.judge(scenario, seen)
        #expect(judged[0].met, "\(judged[0].figure)")
        #expect(judged[0].figure.contains("moving again at 20 s (10 s after the fault, 25 fps)"), "\(judged[0].figure)")
        #expect(judged[1].met)
        #expect(judged[2].met, "\(judged[2].figure)")
        #expect(judged[3].met)
        #expect(judged[4].met, "\(judged[4].figure)")
        #expect(!judged[5].met, "a 9 s stall is longer than 3 s: \(judged[5].figure)")
        #expect(!judged[7].met, "steps were taken")
    }

    @Test func aFaultThatTookNoEffectIsNotARestoredView() {
        let judged = ScenarioJudge.judge(scenario, record("mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"))
        #expect(!judged[0].met)
        #expect(judged[0].figure.contains("did not take effect"), "\(judged[0].figure)")
        #expect(!judged[2].met, "no rebuild: \(judged[2].figure)")
        #expect(judged[5].met, "\(judged[5].figure)")
        #expect(judged[6].met, "30 fps: \(judged[6].figure)")
        #expect(judged[7].met, "no step")
    }

    @Test func aFaultNeverPutInFailsWhatCountsFromIt() {
        let judged = ScenarioJudge.judge(scenario, record("mmmmmmmmmmmmmmmmmmmmmmmmmm", injected: nil))
        #expect(!judged[0].met)
        #expect(judged[0].figure == "the fault was never put in")
    }

    @Test func tooLateIsFailed() {
        // Still from 10 s, moving again at 32 s: 22 s after the fault.
        let seen = record(String(repeating: "m", count: 11) + String(repeating: "-", count: 21) + "mmmm")
        let judged = ScenarioJudge.judge(scenario, seen)
        #expect(!judged[0].met)
        #expect(judged[0].figure.contains("later than 20 s"), "\(judged[0].figure)")
        #expect(!judged[1].met, "no give-up notice either")
    }

    @Test func theGiveUpNoticeAnswersForAViewNeverRestored() {
        let notice = "Couldn't restore bea's view — try Stop and Share again"
        let seen = record(
            "mmmmmmmmmmm-----------------------",
            steps: [(15, "keyframe"), (21, "rebuild"), (26, "giveUp")], notices: [(27, notice)])
        let judged = ScenarioJudge.judge(scenario, seen)
        #expect(!judged[0].met)
        #expect(judged[1].met, "\(judged[1].figure)")
        #expect(!judged[3].met, "giveUp is above shareAgain in the receiver-driven ladder")
    }

    @Test func aStalledCaptureRepeatingItsLastFrameIsNotMoving() {
        let judged = ScenarioJudge.judge(scenario, record("mmmmmmmmmmmrrrrrmmmmmmmmmmmmmmmmmmmm"))
        #expect(judged[0].met, "\(judged[0].figure)")
        #expect(judged[0].figure.contains("moving again at 16 s"), "\(judged[0].figure)")
        #expect(!judged[5].met, "still for about 5 s: \(judged[5].figure)")
    }

    @Test func aLookThatRepeatsTheOneBeforeIsNoStall() {
        // Reports a second apart: one look repeats the count, the next carries two seconds.
        var samples = view("mmmmmmmmmmmmmmmmmmmmmmmmmmmmmm")
        samples[14].framesDecoded = samples[13].framesDecoded
        var seen = record("mmmmmmmmmmmmmmmmmmmmmmmmmmmmmm")
        seen.screens["bea"]?["ana"] = samples
        let judged = ScenarioJudge.judge(scenario, seen)
        #expect(!judged[0].met)
        #expect(judged[0].figure.contains("did not take effect"), "\(judged[0].figure)")
    }

    @Test func aScreenThatGoesAndComesBackFromZeroIsRestored() {
        let judged = ScenarioJudge.judge(scenario, record("mmmmmmmmmmmxx0mmmmmmmmmmmmmm"))
        #expect(judged[0].met, "\(judged[0].figure)")
        #expect(judged[0].figure.contains("moving again at 13 s"), "\(judged[0].figure)")
    }

    @Test func aSlowViewFailsTheFrameRate() {
        var seen = record("mmmmmmmmmmmmmmmmmmmm")
        seen.screens["bea"]?["ana"] = (0..<20).map { ScenarioRecord.ViewSample(t: Double($0), framesDecoded: $0 * 10) }
        let judged = ScenarioJudge.judge(scenario, seen)
        #expect(!judged[6].met)
        #expect(judged[6].figure.hasPrefix("10 fps on average"), "\(judged[6].figure)")
    }

    /// wedge.json's expectations: every whole-run one is "the watchdog stays below".
    static let quietText = """
        {
          "name": "q", "summary": "s", "duration": 45,
          "start": { "server": true, "sharers": [{ "name": "ana" }], "viewers": [{ "name": "bea" }] },
          "faults": [{ "kind": "decoderWedge", "at": 10, "target": "bea" }],
          "expect": [
            { "kind": "viewRestored", "viewer": "bea", "fault": 0, "within": 20 },
            { "kind": "watchdogStaysBelow", "rung": "shareAgain" }
          ]
        }
        """

    @Test func aRunEndsOnceTheWatchdogHasRestedAfterItsLastStep() throws {
        let quiet = try ScenarioParser.parse(Data(Self.quietText.utf8), file: "q.json", expectedName: "q")
        //               0         1         2         3         4
        //               01234567890123456789012345678901234567890
        let marbles = "mmmmmmmmmmm---------0mmmmmmmmmmmmmmmmmmmm"
        let mended = record(marbles, steps: [(15, "keyframe"), (21, "rebuild"), (23, "recovered")])
        func ends(_ seen: ScenarioRecord, at now: Int, lastAction: Double = 10) -> Bool {
            var upTo = seen
            upTo.watchdog["ana"] = seen.watchdog["ana"]?.filter { $0.t <= Double(now) }
            return ScenarioJudge.quietEnough(quiet, upTo, lastAction: lastAction, now: Double(now))
        }
        #expect(!ends(mended, at: 30), "7 s after the last step")
        #expect(ends(mended, at: 33), "10 s after it")
        #expect(!ends(mended, at: 33, lastAction: 25), "a fault's action 8 s before")
        // A relapse: the view wedges again and the ladder steps once more at 31 s.
        let relapsed = record(marbles, steps: [(15, "keyframe"), (21, "rebuild"), (23, "recovered"), (31, "keyframe")])
        #expect(!ends(relapsed, at: 33))
        #expect(!ends(relapsed, at: 40))
        #expect(ends(relapsed, at: 41))
        // A watchdog not at rest keeps the run going.
        var climbing = mended
        climbing.watchdog["ana"] = mended.watchdog["ana"]?.map { sample in
            var sample = sample
            if sample.t >= 22 { sample.rung = "rebuild" }
            return sample
        }
        #expect(!ends(climbing, at: 40))
        // A watchdog that says something only when it changes (a browser sharer's) rests as well.
        var sparse = mended
        sparse.watchdog["ana"] = mended.watchdog["ana"]?.filter { $0.t <= 24 }
        #expect(ScenarioJudge.quietEnough(quiet, sparse, lastAction: 10, now: 34))
        #expect(!ScenarioJudge.quietEnough(quiet, sparse, lastAction: 10, now: 32))
        // A scenario with another whole-run expectation runs its length.
        #expect(!ScenarioJudge.quietEnough(scenario, mended, lastAction: 10, now: 40))
    }
}
