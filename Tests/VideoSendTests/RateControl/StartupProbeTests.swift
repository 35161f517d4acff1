import RTPWire
import Testing
@testable import VideoSend

/// Start-up probing with transport-wide feedback (`StartupProbes`), alone and inside the estimate
/// against `LinkSimulation` (simulated time on a manual clock, not wall time).
@Suite struct StartupProbeTests {
    /// A cluster of `count` packets of `size` bytes sent `sendGap` apart, arriving `arrivalGap`
    /// apart (nil: lost at those indices).
    static func record(
        count: Int, size: Int = 1000, sendGap: Int64, arrivalGap: Int64, lost: Set<Int> = []
    ) -> StartupProbes.Record {
        var record = StartupProbes.Record(cluster: ProbeCluster(id: 1, bitrate: 0, bytes: 0), takenMicros: 0)
        for i in 0..<count {
            let send = Int64(i) * sendGap
            record.sent.append((Int64(i), size, send))
            record.reported[Int64(i)] = (size, send, lost.contains(i) ? nil : 20_000 + Int64(i) * arrivalGap)
        }
        return record
    }

    @Test func aClusterTheLinkTookMoreSlowlyShowsTheLinksRate() {
        // 1000-byte packets sent every 4 ms (2 Mbit/s), arriving every 5.33 ms (1.5 Mbit/s).
        let result = StartupProbes.measure(
            Self.record(count: 12, sendGap: 4_000, arrivalGap: 5_333), configuration: .init())
        #expect(result != nil)
        // 0.95 × the receive rate: the probe found the bottleneck.
        #expect(abs(Double(result ?? 0) - 0.95 * 1_500_000) < 20_000, "\(String(describing: result))")
    }

    @Test func aClusterTheLinkCarriedWholeShowsItsSendRate() {
        let result = StartupProbes.measure(
            Self.record(count: 12, sendGap: 4_000, arrivalGap: 4_000), configuration: .init())
        #expect(abs(Double(result ?? 0) - 2_000_000) < 20_000, "\(String(describing: result))")
    }

    @Test func aClusterMostlyLostOrTooSmallOrImplausiblyFastShowsNothing() {
        let lossy = Self.record(count: 10, sendGap: 4_000, arrivalGap: 4_000, lost: [1, 3, 5])
        #expect(StartupProbes.measure(lossy, configuration: .init()) == nil)
        let small = Self.record(count: 4, sendGap: 4_000, arrivalGap: 4_000)
        #expect(StartupProbes.measure(small, configuration: .init()) == nil)
        // Arriving three times as fast as it left: the receiver's clock or a batch, not the link.
        let bunched = Self.record(count: 10, sendGap: 6_000, arrivalGap: 2_000)
        #expect(StartupProbes.measure(bunched, configuration: .init()) == nil)
    }

    @Test func probesAreHandedOutOnceAfterTheFirstFeedbackAtThreeAndSixTimesTheStart() {
        var probes = StartupProbes()
        #expect(probes.take(nowMicros: 0).isEmpty)
        probes.begin(estimate: 300_000, maximum: 2_540_000)
        let clusters = probes.take(nowMicros: 0)
        #expect(clusters.map(\.bitrate) == [900_000, 1_800_000])
        // 60 ms at the rate.
        #expect(clusters.map(\.bytes) == [6_750, 13_500])
        probes.begin(estimate: 300_000, maximum: 2_540_000)
        #expect(probes.take(nowMicros: 0).isEmpty)
        #expect(probes.state == .probing)
    }

    @Test func clustersWithNoPacketsAreGivenUpAfterTheTimeoutAndSentOnceMore() {
        var probes = StartupProbes()
        probes.begin(estimate: 300_000, maximum: 2_540_000)
        _ = probes.take(nowMicros: 0)
        probes.tick(nowMicros: 500_000, maximum: 2_540_000)
        #expect(probes.state == .probing)
        #expect(probes.take(nowMicros: 500_000).isEmpty)
        probes.tick(nowMicros: 1_100_000, maximum: 2_540_000)
        #expect(probes.state == .probing)
        #expect(probes.take(nowMicros: 1_100_000).map(\.bitrate) == [900_000, 1_800_000])
        probes.tick(nowMicros: 2_200_000, maximum: 2_540_000)
        #expect(probes.state == .done)
        #expect(probes.endReason?.contains("no result") == true)
    }

    /// Sends every cluster `take` hands out as `count` packets of 1000 bytes 4 ms apart from
    /// `sequence`, and feeds back their arrival (the same spacing) or their loss.
    static func send(
        _ probes: inout StartupProbes, count: Int, sequence: inout Int64, nowMicros: inout Int64,
        lost: (Int) -> Bool
    ) -> [(bitrate: Int, atCapacity: Bool)?] {
        var results: [(bitrate: Int, atCapacity: Bool)?] = []
        for cluster in probes.take(nowMicros: nowMicros) {
            var feedback: [PacketFeedback] = []
            for i in 0..<count {
                probes.packetSent(cluster: cluster.id, sequence: sequence, size: 1000, nowMicros: nowMicros)
                feedback.append(
                    PacketFeedback(
                        sequence: sequence, sendMicros: nowMicros, size: 1000,
                        arrivalMicros: lost(i) ? nil : nowMicros + 20_000))
                sequence += 1
                nowMicros += 4_000
            }
            // Media after the cluster, so the feedback reaches past it.
            feedback.append(PacketFeedback(sequence: sequence, sendMicros: nowMicros, size: 1000, arrivalMicros: nil))
            sequence += 1
            results.append(probes.feedback(feedback, maximum: 2_540_000, nowMicros: nowMicros + 50_000))
        }
        return results
    }

    /// On a lossy link both clusters can lose more than a fifth of their packets (or the feedback
    /// on them): that says nothing of the link. Ending there left a simulcast share over Janus on
    /// 5 % loss at the start rate, its top layer off for 16 s; the round is sent once more.
    @Test func aRoundInWhichNoClusterShowedAnythingIsSentOnceMore() {
        var probes = StartupProbes()
        probes.begin(estimate: 300_000, maximum: 2_540_000)
        var sequence: Int64 = 0
        var now: Int64 = 0
        let first = Self.send(&probes, count: 10, sequence: &sequence, nowMicros: &now) { $0 % 3 == 1 }
        #expect(first.allSatisfy { $0 == nil })
        #expect(probes.state == .probing)
        #expect(probes.lastAction?.contains("showed nothing (7 of 10 packets reported arrived)") == true)
        #expect(probes.lastAction?.hasSuffix("probing again") == true, "\(probes.lastAction ?? "")")
        let second = Self.send(&probes, count: 10, sequence: &sequence, nowMicros: &now) { _ in false }
        #expect(second.compactMap { $0?.bitrate }.contains { $0 > 1_500_000 }, "\(second)")
        // A round that showed nothing again ends probing: the retries are spent.
        var again = StartupProbes()
        again.begin(estimate: 300_000, maximum: 2_540_000)
        for _ in 0..<2 { _ = Self.send(&again, count: 10, sequence: &sequence, nowMicros: &now) { $0 % 3 == 1 } }
        #expect(again.state == .done)
        #expect(again.take(nowMicros: now).isEmpty)
        #expect(again.endReason == "no cluster showed the link")
    }

    /// A round whose clusters were delivered is followed by a cluster past them, not the same
    /// round again.
    @Test func aRoundThatShowedTheLinkIsNotSentAgain() {
        var probes = StartupProbes()
        probes.begin(estimate: 300_000, maximum: 2_540_000)
        var sequence: Int64 = 0
        var now: Int64 = 0
        let results = Self.send(&probes, count: 10, sequence: &sequence, nowMicros: &now) { _ in false }
        #expect(results.allSatisfy { ($0?.bitrate ?? 0) > 1_500_000 }, "\(results)")
        #expect(probes.take(nowMicros: now).map(\.bitrate) == [2_540_000])
    }

    /// Before: the estimate climbed 50 % a second from 300 kbit/s. With the probes it takes what
    /// the link carries within a second, and the queue the probes left stays short.
    @Test func onACappedLinkTheProbesFindTheRateWithinASecond() {
        var probed = LinkSimulation(capacity: 1_500_000)
        probed.sendsProbeClusters = true
        probed.run(seconds: 1)
        let target = probed.estimator.targetBitrate(nowMicros: probed.nowMicros)
        #expect(target >= 1_300_000 && target <= 1_500_000, "target \(target) after 1 s")
        #expect(probed.maxQueueMillis(lastSeconds: 1) < 100, "queue \(probed.maxQueueMillis(lastSeconds: 1)) ms")
        var plain = LinkSimulation(capacity: 1_500_000)
        plain.run(seconds: 1)
        #expect(plain.estimator.targetBitrate(nowMicros: plain.nowMicros) < 600_000)
        // And it settles as before.
        probed.run(seconds: 19)
        let mean = probed.meanTarget(lastSeconds: 10)
        #expect(mean > 0.7 * 1_500_000 && mean < 1.1 * 1_500_000, "mean target \(mean)")
        #expect(probed.maxQueueMillis(lastSeconds: 10) < 150)
    }

    /// A shaper's bucket (4 kB, as the gates' `tc tbf … burst 32kbit`) passes the first kilobytes
    /// of a cluster at the line's rate; the cluster's second half still shows the link.
    @Test func aShapersBucketDoesNotMakeAProbeOverstateTheLink() {
        var sim = LinkSimulation(capacity: 1_500_000)
        sim.link.bucketBytes = 4_000
        sim.sendsProbeClusters = true
        sim.run(seconds: 1)
        let highest = sim.targets.map(\.bitrate).max() ?? 0
        let target = sim.estimator.targetBitrate(nowMicros: sim.nowMicros)
        #expect(target >= 1_200_000 && highest <= 1_500_000, "target \(target), highest \(highest)")
    }

    @Test func onASlowLinkTheProbesNeverSetTheEstimateAboveIt() {
        var sim = LinkSimulation(capacity: 600_000)
        sim.sendsProbeClusters = true
        sim.run(seconds: 1)
        // What the probes found is the link, less 5 %: from there the increase is additive.
        let target = sim.estimator.targetBitrate(nowMicros: sim.nowMicros)
        let highest = sim.targets.map(\.bitrate).max() ?? 0
        #expect(target >= 450_000 && highest <= 600_000, "target \(target), highest \(highest)")
        let action = sim.estimator.snapshot(nowMicros: sim.nowMicros).reportAction ?? ""
        #expect(action.hasPrefix("probe 1800 kbit/s delivered"), "\(action)")
    }

    /// The first keyframe (12 kB, paced at 2.5 × the start rate) queues at a 600 kbit/s shaper
    /// (a 4 kB bucket, a 100 ms queue, as the links gates' tbf): the probes wait until it has
    /// crossed, so none of its packets is dropped for them. Probing at the first feedback put the
    /// 1800 kbit/s cluster on top of it: its packets were tail-dropped, and a browser showed the
    /// first frame a second later than a sender without probes.
    @Test func theProbesWaitForTheFirstKeyframeToCrossASlowLink() {
        var sim = LinkSimulation(capacity: 600_000)
        sim.link.bucketBytes = 4_000
        sim.link.queueLimitMicros = 100_000
        sim.burst = (everyMicros: 100_000_000, bytes: 12_000)
        sim.sendsProbeClusters = true
        sim.run(seconds: 2)
        let probe = sim.firstProbeMicros ?? .max
        #expect(sim.firstBurst.packets >= 10)
        #expect(
            probe >= sim.firstBurst.arrivedMicros,
            "probed at \(probe) µs, the burst arrived by \(sim.firstBurst.arrivedMicros)")
        #expect(
            sim.firstBurst.dropped == 0,
            "\(sim.firstBurst.dropped) of the burst's \(sim.firstBurst.packets) packets dropped")
        // The probes still find the link.
        let target = sim.estimator.targetBitrate(nowMicros: sim.nowMicros)
        #expect(target >= 450_000 && target <= 600_000, "target \(target)")
    }

    @Test func onAWideLinkTheProbesGoOnToTheMaximum() {
        var sim = LinkSimulation(capacity: 20_000_000)
        sim.sendsProbeClusters = true
        sim.run(seconds: 1)
        // 900 and 1800 kbit/s delivered, then 3600 asked, capped at the maximum (2540).
        #expect(sim.estimator.targetBitrate(nowMicros: sim.nowMicros) == sim.estimator.configuration.maximumBitrate)
    }
}

extension PacerTests {
    /// A cluster runs at its rate until its bytes have left, queued media first; every packet and
    /// every padding piece of it is tagged with its id; the next cluster follows, then nothing.
    @Test func probeClustersRunAtTheirRateUntilTheirBytesHaveLeft() {
        var pacer = Pacer<Int>(targetBitrate: 300_000)
        pacer.startProbeClusters([
            ProbeCluster(id: 1, bitrate: 900_000, bytes: 4_500), ProbeCluster(id: 2, bitrate: 1_800_000, bytes: 9_000)
        ])
        pacer.enqueue(0, size: 1000, priority: .video, nowMicros: 0)
        var bytes: [Int: Int] = [:]
        var lastTagged: [Int: Int64] = [:]
        var untagged = 0
        var now: Int64 = 0
        while now < 200_000 {
            for (_, cluster) in pacer.releaseTagged(nowMicros: now) {
                if let cluster {
                    bytes[cluster, default: 0] += 1000
                    lastTagged[cluster] = now
                } else {
                    untagged += 1
                }
            }
            let padding = pacer.paddingDueTagged(nowMicros: now)
            if let cluster = padding.cluster {
                bytes[cluster, default: 0] += padding.bytes
                lastTagged[cluster] = now
            } else {
                #expect(padding.bytes == 0)
            }
            now += 2_000
        }
        #expect(untagged == 0)
        #expect((4_500...4_800).contains(bytes[1] ?? 0), "\(bytes)")
        #expect((9_000...9_300).contains(bytes[2] ?? 0), "\(bytes)")
        // 4.5 kB at 900 kbit/s is 40 ms; 9 kB at 1.8 Mbit/s another 40.
        #expect((30_000...50_000).contains(lastTagged[1] ?? 0), "\(lastTagged)")
        #expect((70_000...95_000).contains(lastTagged[2] ?? 0), "\(lastTagged)")
        #expect(pacer.activeCluster == nil)
    }
}
