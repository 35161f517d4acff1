import ScreenWatchdog
import Testing

/// Timelines, one character a second, for one remote screen:
///   `+` the decoded count grew   `=` the same count   `0` the count started again at zero
///   `.` no such screen (its share ended)
/// The expected line: `S` reported stalled that second, `-` not.
@Suite struct StallReporterTests {
    func run(_ timeline: String) -> String {
        var reporter = StallReporter()
        let start = ContinuousClock.now
        var decoded = 100
        var out = ""
        for (second, event) in timeline.enumerated() {
            if event == "+" { decoded += 3 }
            if event == "0" { decoded = 0 }
            let screens = event == "." ? [:] : ["sam": decoded]
            let stalled = reporter.tick(now: start + .seconds(second), decoded: screens)
            out.append(stalled.contains("sam") ? "S" : "-")
        }
        return out
    }

    @Test func fourSecondsWithoutAChangeIsAStall() {
        #expect(run("+====+") == "----S-")
        #expect(run("+===+===+") == "---------", "3 s still is not a stall")
    }

    @Test func aCountThatStartsAgainAtZeroIsMovement() {
        #expect(run("+=====0===") == "----SS----", "a rebuilt screen's decoder starts from zero")
        #expect(run("+=====0====") == "----SS----S", "and a new decoder that decodes nothing stalls in turn")
    }

    @Test func aScreenThatNeverDecodesIsAStallToo() {
        #expect(run("=====") == "----S")
    }

    @Test func aReportIsHeldUpToThreeMinutesThenDropped() {
        let result = run("+" + String(repeating: "=", count: 200))
        #expect(result.filter { $0 == "S" }.count == 180)
        #expect(result.hasPrefix("----S"))
        #expect(result.hasSuffix(String(repeating: "-", count: 17)), "dropped at 184 s, not raised again while still")
        #expect(run("+" + String(repeating: "=", count: 190) + "+====").hasSuffix("----S"), "movement re-arms it")
    }

    @Test func aScreenThatGoesAwayIsForgotten() {
        #expect(run("+=====..===") == "----SS-----")
    }
}
