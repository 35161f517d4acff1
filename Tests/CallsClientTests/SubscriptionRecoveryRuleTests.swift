import CallsClient
import Testing

/// Marble cases of a Janus subscriber's own restart rung: one character a second, `d` frames
/// decoded, `s` packets but no frame (stalled), `.` nothing arrived; `R` under a second marks the
/// restart the rule asked for then.
@Suite struct SubscriptionRecoveryRuleTests {
    /// The restarts `marble` gives, as the marks line: `R` where the rule restarted, `-` elsewhere.
    func restarts(_ marble: String) -> String {
        var rule = SubscriptionRecoveryRule(beganMicros: 0)
        var marks = ""
        for (index, second) in marble.enumerated() {
            let now = Int64(index + 1) * 1_000_000
            let restart = rule.update(
                nowMicros: now, packets: second == "." ? 0 : 50, framesDecoded: second == "d" ? 30 : 0)
            marks.append(restart ? "R" : "-")
        }
        return marks
    }

    @Test func aWedgedDecoderIsReplacedAfterEightStalledSeconds() {
        #expect(restarts("dddddsssssssssddddd") == "------------R------")
        // Decoding again before then: no restart, and the count starts over.
        #expect(restarts("dddsssssssdsssssssdd") == "--------------------")
    }

    @Test func waitingForTheFirstFrameIsNotAStallForTenSeconds() {
        #expect(restarts("sssssssss" + "dddd") == "-------------")
        #expect(restarts("ssssssssssssssssss") == "----------------R-")
    }

    @Test func silenceIsNotAStall() {
        #expect(restarts("ddd" + String(repeating: ".", count: 30) + "ddd") == String(repeating: "-", count: 36))
        #expect(restarts("ddssss....sssssss") == "-----------------")
    }

    @Test func restartsThatDoNotHelpComeLessOften() {
        // Stalled throughout after the first frames: restarts at 11 s, then 20 s later, then 40 s.
        let marks = restarts("ddd" + String(repeating: "s", count: 80))
        let at = marks.enumerated().filter { $0.element == "R" }.map { $0.offset + 1 }
        #expect(at == [11, 31, 71])
    }

    @Test func decodingForHalfAMinuteBringsTheGapBack() {
        var rule = SubscriptionRecoveryRule(beganMicros: 0)
        var now: Int64 = 0
        func run(_ marble: String) -> [Int64] {
            var at: [Int64] = []
            for second in marble {
                now += 1_000_000
                if rule.update(nowMicros: now, packets: second == "." ? 0 : 50, framesDecoded: second == "d" ? 30 : 0) {
                    at.append(now / 1_000_000)
                }
            }
            return at
        }
        #expect(run("dd" + String(repeating: "s", count: 40)) == [10, 30])
        #expect(rule.gapMicros == 40_000_000)
        _ = run(String(repeating: "d", count: 31))
        #expect(rule.gapMicros == SubscriptionRecoveryRule.firstGapMicros)
        #expect(rule.restarts == 2)
    }
}
