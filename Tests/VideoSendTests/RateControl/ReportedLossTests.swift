import TestSupport
import Testing
@testable import VideoSend

/// Loss counted in packets over receiver reports, against one report's own fraction, on a path
/// that loses a tenth of the packets at random.
@Suite struct ReportedLossTests {
    /// A second of a stream at `packetsPerSecond` through 10 % random loss, as a receiver reports it:
    /// (the block's cumulative figures, that second's own fraction).
    struct Receiver {
        var ssrc: UInt32
        var highest: UInt32 = 1000
        var lost: Int32 = 0

        mutating func second(packets: Int, random: inout SplitMix64, lossPercent: UInt64 = 10)
            -> (ReportedLoss.Block, Double)
        {
            var missing = 0
            for _ in 0..<packets where random.next() % 100 < lossPercent { missing += 1 }
            highest += UInt32(packets)
            lost += Int32(missing)
            return (
                .init(ssrc: ssrc, extendedHighestSequence: highest, cumulativeLost: lost),
                Double(missing) / Double(packets)
            )
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aLowRateStreamsLossReadsNearWhatThePathLoses(seed: UInt64) {
        // About 230 kbit/s of video (23 packets a second) beside Opus (50), both through 10 % loss.
        var random = SplitMix64(seed: seed)
        var video = Receiver(ssrc: 0x1234)
        var audio = Receiver(ssrc: 0x5678)
        var loss = ReportedLoss()
        var perReport: [Double] = []
        var counted: [Double] = []
        for second in 0..<300 {
            let (videoBlock, videoOwn) = video.second(packets: 23, random: &random)
            let (audioBlock, audioOwn) = audio.second(packets: 50, random: &random)
            let now = Int64(second) * 1_000_000
            loss.report([videoBlock, audioBlock], nowMicros: now)
            perReport.append(max(videoOwn, audioOwn))  // what taking the worst block read
            if let fraction = loss.fraction(nowMicros: now) { counted.append(fraction) }
        }
        // The worst block's own fraction: over a quarter now and then (what cut the rate on a 10 % path).
        #expect(perReport.contains { $0 > 0.25 })
        // Counted over at least 200 packets: never near the estimate's heavy-loss line.
        #expect(counted.count >= 298)
        #expect(counted.allSatisfy { $0 < 0.2 }, "\(counted.max() ?? 0)")
        let mean = counted.reduce(0, +) / Double(counted.count)
        #expect(abs(mean - 0.10) < 0.02)
    }

    @Test func theFirstReportOnlySetsTheMarksAndAFastStreamUsesOneReport() {
        var loss = ReportedLoss()
        loss.report([.init(ssrc: 1, extendedHighestSequence: 500, cumulativeLost: 40)], nowMicros: 0)
        #expect(loss.fraction(nowMicros: 0) == nil, "the counts so far are from before we looked")
        loss.report([.init(ssrc: 1, extendedHighestSequence: 700, cumulativeLost: 60)], nowMicros: 1_000_000)
        #expect(loss.fraction(nowMicros: 1_000_000) == 0.1)
        #expect(loss.packets(nowMicros: 1_000_000) == 200)
    }

    @Test func blocksOfEveryStreamAddUpAndOddCountsAreBounded() {
        var loss = ReportedLoss()
        loss.report(
            [
                .init(ssrc: 1, extendedHighestSequence: 100, cumulativeLost: 0),
                .init(ssrc: 2, extendedHighestSequence: 100, cumulativeLost: 0)
            ], nowMicros: 0)
        loss.report(
            [
                // 50 audio packets, none lost; 50 video, 10 lost; and a duplicate that took one back.
                .init(ssrc: 1, extendedHighestSequence: 150, cumulativeLost: -1),
                .init(ssrc: 2, extendedHighestSequence: 150, cumulativeLost: 10)
            ], nowMicros: 1_000_000)
        #expect(loss.fraction(nowMicros: 1_000_000) == 0.1)
        // A stream that started again (its sequence went back) sets its marks again, no count.
        loss.report([.init(ssrc: 2, extendedHighestSequence: 20, cumulativeLost: 0)], nowMicros: 2_000_000)
        #expect(loss.packets(nowMicros: 2_000_000) == 100)
        // Reports older than the window are not used.
        #expect(loss.fraction(nowMicros: 10_000_000) == nil)
    }
}
