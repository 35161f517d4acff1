import ScreenWatchdog
import Testing

/// Timelines, one character per 500 ms: `-` all well, `s` signalling down, `c` connection down,
/// `b` both. The expected line shows the notice after each step: `.` hidden, `R` "Reconnecting…".
@Suite struct ReconnectRuleTests {
    func run(_ timeline: String) -> String {
        var rule = ReconnectRule()
        let start = ContinuousClock.now
        var out = ""
        for (index, event) in timeline.enumerated() {
            let now = start + .milliseconds(500 * index)
            _ = rule.signalling(up: event != "s" && event != "b", now: now)
            let notice = rule.connection(healthy: event != "c" && event != "b", now: now)
            out.append(notice == .reconnecting ? "R" : ".")
        }
        return out
    }

    @Test func signallingBlipsShorterThanFourSecondsSayNothing() {
        #expect(run("--sssssss--") == "...........")
    }

    @Test func signallingDownFourSecondsSaysReconnectingUntilASecondPastRecovery() {
        #expect(run("-sssssssssss-----") == ".........RRRRR...")
    }

    @Test func connectionDownThreeSecondsSaysReconnecting() {
        #expect(run("-ccccccccc---") == ".......RRRRR.")
        #expect(run("-ccccc-----") == "...........", "2.5 s is a blip")
    }

    @Test func aProblemReturningDuringTheLingerKeepsTheNotice() {
        #expect(run("ccccccc--------") == "......RRR......", "recovered at 3.5 s, hidden at 4.5 s")
        #expect(run("ccccccc-c------") == "......RRRRR....", "down again at 4 s: hidden a second after 4.5 s")
    }

    @Test func bothDownCountsFromTheFirst() {
        #expect(run("ccccbbbb---") == "......RRRR.")
    }
}
