import RTPWire
import Testing
@testable import VideoSend

/// The estimate without transport-wide feedback, one receiver report a second on a manual clock;
/// then the whole estimator against a simulated bottleneck whose receiver sends only receiver
/// reports (what aiortc, older SFUs and many WHIP ingest servers give).
@Suite struct ReportBasedEstimateTests {
    static let bounds = 100_000...10_000_000

    /// One report a second for `seconds`, the sender sending `sent(estimate)`.
    static func run(
        _ estimate: inout ReportBasedEstimate, seconds: ClosedRange<Int>, loss: Double = 0, rttMs: Int64 = 20,
        sent: (Int) -> Int = { $0 }
    ) {
        for second in seconds {
            estimate.report(
                fractionLost: loss, rttMicros: rttMs * 1000, sentBitrate: sent(estimate.estimate), bounds: bounds,
                nowMicros: Int64(second) * 1_000_000)
        }
    }

    @Test func startsQuicklyButNeverPastHalfAgainWhatWasSent() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        Self.run(&estimate, seconds: 1...5)
        // 15 % a second from 300 kbit/s: about 600 after five seconds.
        #expect(estimate.estimate > 580_000 && estimate.estimate < 630_000, "\(estimate.estimate)")
        #expect(estimate.lastAction == "increase")

        // A sender whose encoder gives all of the target climbs the full step; one that gives
        // 90 % only as far as 1.2 × that; one that gives 80 % holds.
        var lagging = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&lagging, seconds: 1...1, sent: { $0 })
        #expect(lagging.estimate == 1_151_000, "1.15 × 1 Mbit/s + 1 kbit/s: \(lagging.estimate)")
        var slowest = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&slowest, seconds: 1...1, sent: { $0 * 7 / 10 })
        #expect(slowest.estimate == 1_000_000, "1.2 × 700 kbit/s is under it: held, \(slowest.estimate)")
        var slow = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&slow, seconds: 1...1, sent: { $0 * 9 / 10 })
        #expect(slow.estimate == 1_090_000, "capped at 1.2 × 900 kbit/s + 10: \(slow.estimate)")
    }

    @Test func anApplicationLimitedSenderNeitherRaisesNorLowersIt() {
        var estimate = ReportBasedEstimate(startBitrate: 2_000_000)
        Self.run(&estimate, seconds: 1...20, sent: { _ in 100_000 })
        #expect(estimate.estimate == 2_000_000)
        #expect(estimate.lastAction == "application-limited")
    }

    /// Classic loss-based control cuts on every report over 10 %; on a path that loses a tenth of
    /// everything whatever is sent, it cuts to the floor. At a steady round trip the loss is the
    /// path's, and the estimate holds.
    @Test func randomLossAtASteadyRoundTripHoldsTheEstimate() {
        var estimate = ReportBasedEstimate(startBitrate: 800_000)
        Self.run(&estimate, seconds: 1...30, loss: 0.12)
        #expect(estimate.estimate == 800_000)
        #expect(estimate.lastAction == "hold")
    }

    /// A path that drops a tenth of everything at random: the median of each report and the two
    /// before reads either side of 10 %. Held on every report over 10 %, the estimate stayed at the
    /// start rate for a whole share; once the path's own loss is learned from the reports at or
    /// under it, loss at that level is the path's and the estimate climbs through it slowly.
    @Test func aPathsOwnRandomLossIsLearnedAndClimbedThrough() {
        // What aiortc's reports read, counted over 200 packets, on the `links` gate's link that
        // drops 10 % of UDP at random (a share at 300–500 kbit/s): their median of three was over
        // 10 % in 11 of the 20.
        let readings = [
            0.109, 0.044, 0.099, 0.115, 0.104, 0.116, 0.104, 0.099, 0.117, 0.100, 0.088, 0.082, 0.070, 0.067,
            0.092, 0.104, 0.104, 0.104, 0.104, 0.112
        ]
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        var heldAfterLearning = 0
        for (second, reading) in readings.enumerated() {
            estimate.report(
                fractionLost: reading, rttMicros: 20_000, sentBitrate: estimate.estimate, bounds: Self.bounds,
                nowMicros: Int64(second + 1) * 1_000_000)
            if estimate.pathLoss > 0, estimate.lastAction != "increase" { heldAfterLearning += 1 }
        }
        #expect(estimate.pathLoss >= 0.06 && estimate.pathLoss <= 0.10, "\(estimate.pathLoss)")
        #expect(heldAfterLearning == 0, "held \(heldAfterLearning) times on the path's own loss")
        // 8 % a second once learned: over twice the start in 20 s.
        #expect(estimate.estimate > 650_000, "\(estimate.estimate)")
    }

    /// Loss that rises with the rate is ours (a policer: no queue, so the round trip stays
    /// steady): the reports over 10 % are not learned as the path's, so the estimate holds at
    /// the rate where it began, and does not creep up as the reports it learned from age out.
    @Test func lossThatRisesWithTheRateIsNotLearnedAsThePaths() {
        var estimate = ReportBasedEstimate(startBitrate: 1_050_000)
        var afterTen = 0
        for second in 1...90 {
            let sent = estimate.estimate
            let loss = max(0, 1 - 1_000_000 / Double(sent))
            estimate.report(
                fractionLost: loss, rttMicros: 20_000, sentBitrate: sent, bounds: Self.bounds,
                nowMicros: Int64(second) * 1_000_000)
            if second == 10 { afterTen = estimate.estimate }
        }
        #expect(estimate.pathLoss == 0, "\(estimate.pathLoss)")
        // Two steps while the median of three catches up (5 % and 12 % lost), then held there:
        // 1.23 Mbit/s, where the policer drops 18 %.
        #expect(afterTen < 1_250_000, "\(afterTen)")
        #expect(estimate.estimate == afterTen, "crept from \(afterTen) to \(estimate.estimate)")
    }

    @Test func lossWithAQueueBuildingOrHeavyLossCutsIt() {
        var estimate = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&estimate, seconds: 1...1, rttMs: 10)
        let before = estimate.estimate
        // 20 % lost, the round trip 40 ms over its least: (1 − 0.2/2) of it.
        estimate.report(
            fractionLost: 0.2, rttMicros: 50_000, sentBitrate: before, bounds: Self.bounds, nowMicros: 2_000_000)
        // The loss is averaged with the last report's (0): 10 %, not over 10 %, so it holds…
        #expect(estimate.estimate == before)
        estimate.report(
            fractionLost: 0.2, rttMicros: 50_000, sentBitrate: before, bounds: Self.bounds, nowMicros: 3_000_000)
        #expect(estimate.estimate == before * 9 / 10, "\(estimate.estimate)")
        #expect(estimate.lastAction == "decrease (loss)")

        var heavy = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&heavy, seconds: 1...3, loss: 0.4, rttMs: 10)
        #expect(heavy.estimate < 1_000_000 * 9 / 10, "40 % loss at a steady round trip still cuts: \(heavy.estimate)")
    }

    @Test func aQueueBuildingCutsBeforeAnythingIsLost() {
        var estimate = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&estimate, seconds: 1...2, rttMs: 10)
        let before = estimate.estimate
        Self.run(&estimate, seconds: 3...3, rttMs: 90)
        #expect(estimate.estimate == before * 9 / 10)
        #expect(estimate.lastAction == "decrease (delay)")
        // Between 25 and 60 ms over the least it neither rises nor falls.
        let held = estimate.estimate
        Self.run(&estimate, seconds: 4...4, rttMs: 40)
        #expect(estimate.estimate == held && estimate.lastAction == "hold")
    }

    /// The start's climb runs past the link before the reports show it: the first report with a
    /// queue starting (the round trip 8–25 ms over its least) while the sender fills the estimate
    /// brings it back to what was sent, and the climb goes on at the slower step from there. Later
    /// such reports only hold.
    @Test func theFirstQueueAfterTheStartSettlesTheEstimateOnWhatWasSent() {
        var estimate = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&estimate, seconds: 1...3, rttMs: 2)
        #expect(estimate.estimate > 1_500_000 && !estimate.startOver)
        // The sender got 90 % of it out; the round trip 10 ms over the least.
        let sent = estimate.estimate * 9 / 10
        Self.run(&estimate, seconds: 4...4, rttMs: 12, sent: { _ in sent })
        #expect(estimate.estimate == sent && estimate.startOver && estimate.lastAction == "hold")
        // From there 8 % a second, not 15.
        Self.run(&estimate, seconds: 5...5, rttMs: 2)
        #expect(estimate.estimate == Int(Double(sent) * ReportBasedEstimate.increase) + 1000, "\(estimate.estimate)")
        let raised = estimate.estimate
        Self.run(&estimate, seconds: 6...6, rttMs: 12, sent: { $0 * 9 / 10 })
        #expect(estimate.estimate == raised && estimate.lastAction == "hold")
        // An application-limited sender's estimate is not taken down by a queue starting.
        var cheap = ReportBasedEstimate(startBitrate: 1_000_000)
        Self.run(&cheap, seconds: 1...1, rttMs: 2)
        let before = cheap.estimate
        Self.run(&cheap, seconds: 2...2, rttMs: 12, sent: { $0 / 3 })
        #expect(cheap.estimate == before && !cheap.startOver)
    }

    /// aiortc's REMB follows what arrives: alone it is no cap, or cheap content would drag the
    /// estimate down with it. Once the reports show congestion, a REMB under what is sent is
    /// where the estimate goes.
    @Test func aREMBCountsOnlyOnceTheReportsConfirmCongestion() {
        var estimate = ReportBasedEstimate(startBitrate: 1_000_000)
        estimate.receiverEstimate(200_000)
        Self.run(&estimate, seconds: 1...3, rttMs: 10, sent: { _ in 300_000 })
        #expect(estimate.estimate == 1_000_000, "an unconfirmed REMB moved it to \(estimate.estimate)")

        // Loss at a steady round trip does not confirm it: on a path that loses a tenth at
        // random, aiortc's REMB sits under what is sent.
        estimate.receiverEstimate(600_000)
        Self.run(&estimate, seconds: 4...5, loss: 0.05, rttMs: 10, sent: { _ in 900_000 })
        #expect(estimate.estimate >= 1_000_000, "loss alone confirmed the REMB: \(estimate.estimate)")

        // A queue (the round trip 30 ms over its least) does.
        Self.run(&estimate, seconds: 6...6, loss: 0.05, rttMs: 40, sent: { _ in 900_000 })
        #expect(estimate.estimate == 600_000)
        #expect(estimate.lastAction == "decrease (REMB)")
    }

    /// 2–10 % lost at a steady round trip: the path's loss, climbed through at the slow rate.
    @Test func moderateLossAtASteadyRoundTripClimbsSlowly() {
        var estimate = ReportBasedEstimate(startBitrate: 500_000)
        Self.run(&estimate, seconds: 1...5, loss: 0.06)
        // 8 % a second (+1 kbit/s), not the start's 15 %: about 735 after five seconds.
        #expect(estimate.estimate > 720_000 && estimate.estimate < 760_000, "\(estimate.estimate)")
        #expect(estimate.lastAction == "increase")
    }

    /// One report that reads half lost among ones that read a tenth is an outlier (a few dozen
    /// packets a report), not a reason to cut.
    @Test func oneOutlyingReportDoesNotCut() {
        var estimate = ReportBasedEstimate(startBitrate: 800_000)
        Self.run(&estimate, seconds: 1...2, loss: 0.10)
        Self.run(&estimate, seconds: 3...3, loss: 0.5)
        #expect(estimate.estimate >= 800_000, "\(estimate.estimate)")
        Self.run(&estimate, seconds: 4...4, loss: 0.5)
        #expect(estimate.estimate < 800_000, "two in three: heavy loss, cut")
    }

    @Test func decreasesAreSpacedByARoundTripAndNeverHalveAtOnce() {
        var estimate = ReportBasedEstimate(startBitrate: 1_000_000)
        for (i, now) in [1_000_000, 1_100_000, 1_200_000].enumerated() {
            estimate.report(
                fractionLost: 0.9, rttMicros: 10_000, sentBitrate: 1_000_000, bounds: Self.bounds,
                nowMicros: Int64(now))
            if i == 0 { #expect(estimate.estimate == 550_000, "(1 − 0.9/2), not less than half: \(estimate.estimate)") }
        }
        #expect(estimate.estimate == 550_000, "two more within 300 ms + a round trip change nothing")
    }

    @Test func theSentRateIsTheLastSecondsBytes() {
        var rate = SentRate()
        for i in 0..<100 { rate.add(bytes: 1250, nowMicros: Int64(i) * 10_000) }  // 1 Mbit/s for a second
        #expect(rate.bitsPerSecond(nowMicros: 990_000) == 1_000_000)
        #expect(rate.bitsPerSecond(nowMicros: 1_500_000) == 400_000, "half a second later, the later half")
        #expect(rate.bitsPerSecond(nowMicros: 5_000_000) == 0)
    }
}

/// The whole estimator with no transport-wide feedback: a tail-drop bottleneck (`SimulatedLink`,
/// queue limit 100 ms as the gates' `tbf … latency 100ms`), a sender that sends its target, and a
/// receiver report each second with the fraction lost and the round trip (queue included).
@Suite struct ReportBasedLinkTests {
    struct Result {
        var targets: [Int] = []
        var sent: [Int] = []
        var lossFractions: [Double] = []
    }

    /// A sender whose content fills any target (`ProbeTests.simulate` with no content limit: it
    /// is never application-limited, so it never probes).
    static func simulate(capacity: Int, randomLoss: Double = 0, seconds: Int) -> Result {
        let run = ProbeTests.simulate(capacity: capacity, content: .max, seconds: seconds, randomLoss: randomLoss)
        return Result(targets: run.map(\.target), sent: run.map(\.sent), lossFractions: run.map(\.lossFraction))
    }

    @Test func aCappedLinkIsFilledWithoutRunningFarOverIt() {
        let run = Self.simulate(capacity: 1_500_000, seconds: 40)
        let late = run.targets.suffix(20)
        let mean = Double(late.reduce(0, +)) / Double(late.count)
        #expect(mean > 0.6 * 1_500_000 && mean < 1.15 * 1_500_000, "mean target \(mean)")
        // This sender sends its whole target (a real encoder lags it): the first step past the
        // capacity, at most the start's 20 %, is the worst second.
        let worst = run.sent.dropFirst(2).max() ?? 0
        #expect(worst <= 1_830_000, "a second sent \(worst) bit/s on a 1.5 Mbit/s link")
        let lossy = run.lossFractions.dropFirst(10).filter { $0 > 0.05 }.count
        #expect(lossy <= 3, "\(lossy) of the last 30 seconds lost over 5 %")
    }

    @Test func tenPercentRandomLossDoesNotTakeTheRateDown() {
        let run = Self.simulate(capacity: 20_000_000, randomLoss: 0.10, seconds: 30)
        #expect((run.targets.last ?? 0) >= 300_000, "not under its start, not cut to the floor: \(run.targets)")
    }

    @Test func inputsSayWhatMovesTheEstimate() {
        var estimator = BandwidthEstimator()
        estimator.receiverReport(fractionLost: 0, nowMicros: 1_000_000)
        #expect(estimator.snapshot(nowMicros: 1_000_000).inputs == ["loss"])
        estimator.receiverEstimatedMaximum(500_000, nowMicros: 1_500_000)
        #expect(estimator.snapshot(nowMicros: 1_500_000).inputs == ["remb", "loss"])
        #expect(estimator.snapshot(nowMicros: 1_500_000).reportAction != nil)
    }
}
