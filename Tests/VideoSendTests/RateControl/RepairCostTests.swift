import Testing
import VideoSend

/// Retransmissions' share of the link comes off the encoders' targets, smoothed, and never more
/// than the pacer's budget for them.
@Suite struct RepairCostTests {
    @Test func noRepairLeavesTheTargetLessTheAudio() {
        var cost = RepairCost()
        cost.update(totalBytes: 0, nowMicros: 0)
        cost.update(totalBytes: 0, nowMicros: 1_000_000)
        #expect(cost.videoBitrate(target: 1_000_000, reserve: 40_000) == 960_000)
    }

    @Test func steadyRepairComesOffWithinAFewSeconds() {
        var cost = RepairCost()
        // 12.5 kB of retransmissions a second: 100 kbit/s.
        for second in 0...8 { cost.update(totalBytes: second * 12_500, nowMicros: Int64(second) * 1_000_000) }
        let video = cost.videoBitrate(target: 1_000_000, reserve: 40_000)
        #expect(video < 870_000 && video > 855_000, "\(video)")
        // One second's burst moves it by a third of the way, not all of it.
        var burst = RepairCost()
        burst.update(totalBytes: 0, nowMicros: 0)
        burst.update(totalBytes: 50_000, nowMicros: 1_000_000)
        #expect(burst.bitsPerSecond == 0.3 * 400_000)
    }

    @Test func neverMoreThanAQuarterOfTheTarget() {
        var cost = RepairCost()
        for second in 0...10 { cost.update(totalBytes: second * 1_000_000, nowMicros: Int64(second) * 1_000_000) }
        #expect(cost.videoBitrate(target: 1_000_000, reserve: 40_000) == 710_000)
    }

    @Test func aCounterThatWentBackIsIgnored() {
        var cost = RepairCost()
        cost.update(totalBytes: 5_000, nowMicros: 0)
        cost.update(totalBytes: 100, nowMicros: 1_000_000)
        #expect(cost.bitsPerSecond == 0)
    }
}
