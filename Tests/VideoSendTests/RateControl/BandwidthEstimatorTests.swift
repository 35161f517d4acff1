import RTPWire
import Testing
@testable import VideoSend

/// The estimate against `LinkSimulation` (a simulated bottleneck queue, see SimulatedLink.swift)
/// on a manual clock: every figure below is simulated time, not wall time.
@Suite struct BandwidthEstimatorTests {
    @Test func settlesNearTheCapacityOfACappedLinkWithTheQueueBounded() {
        var sim = LinkSimulation(capacity: 1_500_000)
        sim.run(seconds: 40)
        let mean = sim.meanTarget(lastSeconds: 20)
        #expect(mean > 0.7 * 1_500_000 && mean < 1.1 * 1_500_000, "mean target \(mean)")
        #expect(sim.maxQueueMillis(lastSeconds: 20) < 150, "queue \(sim.maxQueueMillis(lastSeconds: 20)) ms")
        #expect(sim.estimator.limitedBy(nowMicros: sim.nowMicros) == .bandwidth)
    }

    @Test func rampsFromTheStartBitrateToACleanLinksMaximumInSeconds() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.run(seconds: 10)
        // From 300 kbit/s at 50 % a second: 2.54 Mbit/s after about 5.3 s.
        let reached = sim.firstTime(reaching: sim.estimator.configuration.maximumBitrate)
        #expect(reached != nil && reached! <= 6.5, "reached the maximum at \(String(describing: reached)) s")
        #expect(sim.estimator.limitedBy(nowMicros: sim.nowMicros) == .none)
        #expect(sim.estimator.snapshot(nowMicros: sim.nowMicros).delayState == "normal")
    }

    @Test func backsOffWhenTheCapacityDropsAndRecoversWhenItReturns() {
        var estimator = BandwidthEstimator()
        estimator.setMaximumBitrate(4_000_000)
        var sim = LinkSimulation(estimator: estimator, capacity: 3_000_000)
        sim.run(seconds: 20)
        let before = sim.meanTarget(lastSeconds: 5)
        #expect(before > 2_000_000, "before the drop \(before)")
        sim.link.capacity = 800_000
        sim.run(seconds: 15)
        let during = sim.meanTarget(lastSeconds: 8)
        #expect(during < 1_000_000 && during > 400_000, "after the drop \(during)")
        #expect(sim.maxQueueMillis(lastSeconds: 8) < 200)
        let recoveryStart = Double(sim.nowMicros) / 1_000_000
        sim.link.capacity = 3_000_000
        sim.run(seconds: 30)
        let recovered = sim.firstTime(reaching: 2_000_000, after: recoveryStart)
        #expect(recovered != nil, "never got back over 2 Mbit/s; now \(sim.meanTarget(lastSeconds: 1))")
    }

    @Test func heavyLossCutsTheRateAndModerateLossDoesNot() {
        var heavy = LinkSimulation(capacity: 20_000_000)
        heavy.link.randomLoss = 0.2
        heavy.run(seconds: 10)
        let snapshot = heavy.estimator.snapshot(nowMicros: heavy.nowMicros)
        #expect(snapshot.lossLimitBitrate != nil)
        #expect(snapshot.targetBitrate < 1_000_000, "target under 20 % loss \(snapshot.targetBitrate)")
        #expect((snapshot.lossFraction ?? 0) > 0.1)

        var moderate = LinkSimulation(capacity: 20_000_000)
        moderate.link.randomLoss = 0.05
        moderate.run(seconds: 10)
        let m = moderate.estimator.snapshot(nowMicros: moderate.nowMicros)
        #expect(m.lossLimitBitrate == nil)
        #expect(
            m.targetBitrate == moderate.estimator.configuration.maximumBitrate,
            "target under 5 % loss \(m.targetBitrate)")
    }

    /// A tenth lost at random with no queue (the path's loss): classic loss-based control cuts on
    /// every count over 10 % and ratchets to the floor; this holds and climbs.
    @Test func tenPercentRandomLossWithNoQueueDoesNotRatchetDown() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.link.randomLoss = 0.10
        sim.run(seconds: 30)
        let late = sim.meanTarget(lastSeconds: 5)
        #expect(late >= 1_000_000, "mean target over the last 5 s under 10 % random loss: \(late)")
    }

    @Test func lossLimitLiftsAgainOnceLossStops() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.link.randomLoss = 0.25
        sim.run(seconds: 5)
        let cut = sim.estimator.targetBitrate(nowMicros: sim.nowMicros)
        sim.link.randomLoss = 0
        sim.run(seconds: 30)
        let after = sim.estimator.snapshot(nowMicros: sim.nowMicros)
        #expect(after.targetBitrate > 2 * cut, "cut to \(cut), then \(after.targetBitrate)")
    }

    @Test func rembCapsTheTargetAndIsTheEstimateWithoutTransportFeedback() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.run(seconds: 2)
        sim.estimator.receiverEstimatedMaximum(600_000, nowMicros: sim.nowMicros)
        sim.run(seconds: 5)
        // The REMB is not repeated in the simulation; read before it lapses (10 s).
        #expect(sim.estimator.targetBitrate(nowMicros: sim.nowMicros) == 600_000)
        #expect(sim.estimator.limitedBy(nowMicros: sim.nowMicros) == .bandwidth)
        sim.run(seconds: 6)
        #expect(sim.estimator.targetBitrate(nowMicros: sim.nowMicros) > 600_000, "a lapsed REMB stops capping")

        // Without transport-wide feedback a REMB alone is not the estimate (ReportBasedEstimate:
        // aiortc's follows what arrives); the reports move it.
        var rembOnly = BandwidthEstimator()
        #expect(rembOnly.targetBitrate(nowMicros: 0) == rembOnly.configuration.startBitrate)
        rembOnly.receiverEstimatedMaximum(1_800_000, nowMicros: 0)
        #expect(rembOnly.targetBitrate(nowMicros: 1000) == rembOnly.configuration.startBitrate)
        rembOnly.receiverEstimatedMaximum(100_000, nowMicros: 2000)
        #expect(rembOnly.targetBitrate(nowMicros: 3000) == rembOnly.configuration.startBitrate)
    }

    @Test func anApplicationLimitedSenderIsNotReportedAsLimitedByBandwidth() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.sourceLimit = 120_000
        sim.run(seconds: 15)
        #expect(sim.estimator.limitedBy(nowMicros: sim.nowMicros) == .none)
    }

    /// A source that sends little but bursts (a keyframe every 2 s) may overuse a link briefly;
    /// the decrease starts from the estimate, not from the little that arrived.
    @Test func keyframeBurstsOfAnApplicationLimitedSourceDoNotCollapseTheEstimate() {
        var sim = LinkSimulation(capacity: 1_500_000)
        sim.sourceLimit = 300_000
        sim.burst = (everyMicros: 2_000_000, bytes: 120_000)
        sim.run(seconds: 30)
        let lowest = sim.targets.filter { $0.seconds >= 5 }.map(\.bitrate).min() ?? 0
        // A decrease from what arrived would be 0.85 × the 300 kbit/s between bursts: 255.
        #expect(lowest >= 450_000, "fell to \(lowest)")
    }

    @Test func cpuIsTheReasonWhenTheEncoderSideSaysSo() {
        var estimator = BandwidthEstimator()
        estimator.setLimitedByCPU(true)
        #expect(estimator.limitedBy(nowMicros: 0) == .cpu)
        estimator.setLimitedByCPU(false)
        #expect(estimator.limitedBy(nowMicros: 0) == .none, "nothing sent yet: application-limited")
        // 300 kbit/s sent over the last second: the 300 kbit/s start holds it under the maximum.
        for i in 0..<32 { estimator.packetSent(sequence: nil, size: 1200, nowMicros: Int64(i) * 31_000) }
        #expect(estimator.limitedBy(nowMicros: 999_000) == .bandwidth, "the start under the 2.54 Mbit/s maximum")
    }

    /// A source that sends little (a still screen) on a link that carries far more: the estimate
    /// does not float up past what was ever carried, so the first busy second after it is not sent
    /// at a rate the link never showed.
    @Test func anApplicationLimitedSourceDoesNotRaiseTheEstimatePastWhatItCarried() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.sourceLimit = 200_000
        sim.run(seconds: 20)
        let target = sim.estimator.targetBitrate(nowMicros: sim.nowMicros)
        #expect(target <= 400_000, "rose to \(target) on 200 kbit/s sent")
        #expect(target >= sim.estimator.configuration.startBitrate, "and is not lowered for sending little")
    }

    @Test func withoutAnyFeedbackReceiverReportsMoveTheStartBitrate() {
        var estimator = BandwidthEstimator()
        // The sender sends its target (1200-byte packets every 10 ms at most), a report a second.
        func second(_ n: Int, lost: Double) {
            let target = estimator.targetBitrate(nowMicros: Int64(n - 1) * 1_000_000)
            let packets = target / 8 / 1200
            for i in 0..<packets {
                estimator.packetSent(
                    sequence: nil, size: 1200,
                    nowMicros: Int64(n - 1) * 1_000_000 + Int64(i) * 1_000_000 / Int64(packets))
            }
            estimator.receiverReport(fractionLost: lost, nowMicros: Int64(n) * 1_000_000)
        }
        for n in 1...5 { second(n, lost: 0) }
        let raised = estimator.targetBitrate(nowMicros: 5_000_000)
        #expect(raised > estimator.configuration.startBitrate)
        second(6, lost: 0.6)
        second(7, lost: 0.6)  // the median of three reports: two heavy ones cut
        #expect(estimator.targetBitrate(nowMicros: 7_000_000) < raised)
    }
}
