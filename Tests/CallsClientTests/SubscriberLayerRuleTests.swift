import Testing
@testable import CallMedia
@testable import CallsClient

/// The layer a Janus subscriber asks for, as marbles: one character a second —
/// `g` good (30 frames, no loss, no queue), `l` 20 % lost, `f` frozen (packets, no frame),
/// `q` a 200 ms queue, `m` middling (5 % lost: neither good nor bad) — and the layer asked for
/// after each second.
@Suite struct SubscriberLayerRuleTests {
    static func second(_ mark: Character, at index: Int) -> SubscriberLayerRule.Second {
        let now = Int64(index + 1) * 1_000_000
        switch mark {
        case "l": return .init(nowMicros: now, packets: 80, lost: 20, framesDecoded: 25)
        case "f": return .init(nowMicros: now, packets: 40, lost: 0, framesDecoded: 0)
        case "q": return .init(nowMicros: now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 200)
        case "m": return .init(nowMicros: now, packets: 95, lost: 5, framesDecoded: 30)
        default: return .init(nowMicros: now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 10)
        }
    }

    /// The layers after each second of `marbles` (the first at second `from` + 1), as digits.
    static func run(_ marbles: String, from start: Int = 0, rule: inout SubscriberLayerRule) -> String {
        marbles.enumerated().map { index, mark in
            _ = rule.update(second(mark, at: start + index))
            return String(rule.layer)
        }.joined()
    }

    @Test func twoBadSecondsStepDownAndTheSettlingSecondsAreNotJudged() {
        var rule = SubscriberLayerRule()
        // l l: down to 1; two seconds not judged; l l: down to 0; nothing lower.
        #expect(Self.run("llllllllll", rule: &rule) == "2111000000")
        var delayed = SubscriberLayerRule()
        #expect(Self.run("gqqgg", rule: &delayed) == "22111", "a queue over 150 ms is a bad second")
    }

    @Test func oneBadSecondBetweenGoodOnesIsNotEnough() {
        var rule = SubscriberLayerRule()
        #expect(Self.run("glglgmlg", rule: &rule) == "22222222")
    }

    @Test func aFreezeStepsDownAtOnce() {
        var rule = SubscriberLayerRule()
        #expect(Self.run("gf", rule: &rule) == "21")
        // Before the first frame, waiting for a keyframe is not a freeze; loss still counts.
        var starting = SubscriberLayerRule()
        #expect(Self.run("fffgf", rule: &starting) == "22221")
        var lossy = SubscriberLayerRule()
        #expect(Self.run("fll", rule: &lossy) == "221")
    }

    /// Up after 8 s of good seconds (from the first good one after settling); middling seconds
    /// neither count nor reset the bad count's effect.
    @Test func goodSecondsForTheHoldStepUp() {
        var rule = SubscriberLayerRule(layer: 0)
        #expect(Self.run("ggggggggg", rule: &rule) == "000000001")
        var interrupted = SubscriberLayerRule(layer: 0)
        #expect(Self.run("ggggmggggggggg", rule: &interrupted) == "00000000000001")
        var top = SubscriberLayerRule(layer: 2)
        #expect(Self.run(String(repeating: "g", count: 20), rule: &top) == String(repeating: "2", count: 20))
    }

    /// A step up that turns bad within 10 s doubles the hold: the next try waits 16 s.
    @Test func aFailedStepUpDoublesTheHold() {
        var rule = SubscriberLayerRule(layer: 0)
        let tried = Self.run("ggggggggg" + "ggll", rule: &rule)
        #expect(tried == "000000001" + "1110")
        #expect(rule.upHoldMicros == 16_000_000)
        // After settling, 16 s of good seconds before the next try.
        let again = Self.run(String(repeating: "g", count: 18), from: 13, rule: &rule)
        #expect(again.last == "1" && again.dropLast().allSatisfy { $0 == "0" }, "\(again)")
    }

    @Test func theHoldNeverPassesItsLongest() {
        var rule = SubscriberLayerRule(layer: 1)
        var now: Int64 = 0
        for _ in 0..<20 {
            // Up after the hold, then frozen at once: each time the hold doubles.
            while rule.layer == 1 {
                now += 1_000_000
                _ = rule.update(.init(nowMicros: now, packets: 100, lost: 0, framesDecoded: 30))
            }
            while rule.layer == 2 {
                now += 1_000_000
                _ = rule.update(.init(nowMicros: now, packets: 50, lost: 0, framesDecoded: 0))
            }
        }
        #expect(rule.layer == 1 && rule.upHoldMicros == SubscriberLayerRule.longestUpHoldMicros)
    }
}

/// The delay-based reading: a queue that grows shows as delay above the least of the window.
@Suite struct ArrivalDelayTests {
    @Test func aSteadyPathHoldsNoQueueAndAFillingOneShowsIt() {
        var delay = ArrivalDelay(clockRate: 90_000)
        // 30 frames a second, each arriving 20 ms after it was sent: no queue.
        for frame in 0..<60 {
            delay.received(timestamp: UInt32(frame * 3000), arrivalMicros: Int64(frame) * 33_333 + 20_000)
        }
        #expect(delay.queuingMilliseconds < 2)
        // Then each frame 10 ms later than the one before: after 30 frames the queue is ~300 ms.
        for frame in 60..<90 {
            delay.received(
                timestamp: UInt32(frame * 3000),
                arrivalMicros: Int64(frame) * 33_333 + 20_000 + Int64(frame - 59) * 10_000)
        }
        #expect(delay.queuingMilliseconds > 200, "\(delay.queuingMilliseconds)")
    }

    @Test func theRTPTimeWrapsAndAJumpStartsAfresh() {
        var delay = ArrivalDelay(clockRate: 90_000)
        var timestamp = UInt32.max - 3000 * 10
        for frame in 0..<30 {
            delay.received(timestamp: timestamp, arrivalMicros: Int64(frame) * 33_333)
            timestamp &+= 3000
        }
        #expect(delay.queuingMilliseconds < 2, "the wrap is not a jump")
        // A new stream under the same SSRC: its times are hours away; the reading starts again.
        delay.received(timestamp: timestamp &+ 900_000_000, arrivalMicros: 2_000_000)
        #expect(delay.queuingMilliseconds == 0)
    }
}

extension SubscriberLayerRuleTests {
    /// Marbles with what arrived: `H` good at 450 kbit/s, `M` good at 300, `L` good at 150, `Q` a
    /// 200 ms queue with 300 kbit/s arriving (the link's most), `F` frozen (not the link's doing).
    static func carried(_ marbles: String, from start: Int = 0, rule: inout SubscriberLayerRule) -> String {
        marbles.enumerated().map { index, mark in
            let now = Int64(start + index + 1) * 1_000_000
            let second: SubscriberLayerRule.Second =
                switch mark {
                case "H":
                    .init(
                        nowMicros: now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 5, receivedKbps: 450)
                case "M":
                    .init(
                        nowMicros: now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 5, receivedKbps: 300)
                case "Q":
                    .init(
                        nowMicros: now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 200, receivedKbps: 300
                    )
                case "F":
                    .init(nowMicros: now, packets: 40, lost: 0, framesDecoded: 0, queuingDelayMs: 5, receivedKbps: 100)
                default:
                    .init(
                        nowMicros: now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 5, receivedKbps: 150)
                }
            _ = rule.update(second)
            return String(rule.layer)
        }.joined()
    }

    /// A viewer whose link carries 300 kbit/s: the 1/2 layer overfilled it, so after stepping down
    /// to the 1/4 layer the rule does not try it again after 8 good seconds, only once a minute has
    /// passed since the link failed; without the figures (older callers) it tries after 8 s.
    @Test func aLayerThatOverfilledTheLinkIsNotTriedAgainForAMinute() {
        var rule = SubscriberLayerRule(layer: 1)
        // On the 1/2 layer, two queued seconds at 300 kbit/s: down to 0; the link carried 300.
        let down = Self.carried("MQQ", rule: &rule)
        #expect(down == "110")
        #expect(rule.capacity?.kbps == 300)
        // 30 good seconds on the 1/4 layer: no step up (the 1/2 layer needed 300, 90 % of it is 270).
        #expect(
            Self.carried(String(repeating: "L", count: 30), from: 3, rule: &rule) == String(repeating: "0", count: 30))
        // A minute after the failure (at second 3), the 1/2 layer is tried again.
        let later = Self.carried(String(repeating: "L", count: 32), from: 33, rule: &rule)
        #expect(later.contains("1"), "\(later)")
        #expect(later.firstIndex(of: "1").map { later.distance(from: later.startIndex, to: $0) + 34 } ?? 0 >= 63)
        var blind = SubscriberLayerRule(layer: 1)
        #expect(Self.run("gqqgggggggggg", rule: &blind) == "1100000000001", "without figures: after 8 s")
    }

    /// A layer that fits well under what the link carried is tried after the usual 8 s.
    @Test func aLayerWellUnderTheLinksMostIsTriedAfterTheHold() {
        var rule = SubscriberLayerRule(layer: 2)
        // The full layer at 450 overfills a link that carries 300 at most: down to 1.
        #expect(Self.carried("HQQ", rule: &rule) == "221")
        // The 1/2 layer arrives at 150, then freezes (the decoder's doing, not the link's): down to 0.
        #expect(Self.carried("LLLF", from: 3, rule: &rule) == "1110")
        #expect(rule.capacity?.kbps == 300)
        // The 1/2 layer needed 150, under 90 % of 300: tried after the 8 s hold, as without figures.
        #expect(Self.carried(String(repeating: "L", count: 11), from: 7, rule: &rule) == "00000000011")
    }
}
