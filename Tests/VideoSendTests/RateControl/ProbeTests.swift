import RTPWire
import Testing
@testable import VideoSend

/// Bandwidth probes without transport-wide feedback: an application-limited sender (a cheap
/// screen) tops the link up with padding, and the receiver reports judge it. The whole estimator
/// against a tail-drop bottleneck (`SimulatedLink`, a 100 ms queue as the gates' tbf), a sender
/// whose content costs `content` bit/s at most, padding at the estimator's probe rate, and one
/// receiver report a second with the fraction lost and the round trip.
@Suite struct ProbeTests {
    struct Second {
        var target: Int
        var sent: Int
        var padding: Int
        var lossFraction: Double
        var probe: Int?
        var action: String?
        /// Media packets (not padding) the link dropped.
        var mediaLost = 0
    }

    static func simulate(
        capacity: Int, content: Int, seconds: Int, randomLoss: Double = 0, wantMore: Bool = true,
        maximum: Int = 4_000_000, nacks: Bool = false, mediaAfterPadding: Bool = false
    ) -> [Second] {
        var estimator = BandwidthEstimator()
        estimator.setMaximumBitrate(maximum)
        estimator.setEncodersWantMore(wantMore)
        var link = SimulatedLink(capacity: capacity)
        link.queueLimitMicros = 100_000
        link.randomLoss = randomLoss
        var seconds_: [Second] = []
        var now: Int64 = 0
        var (mediaCredit, paddingCredit) = (0.0, 0.0)
        var (sentBits, paddingBits, packets, lost, mediaLost) = (0, 0, 0, 0, 0)
        // With `nacks`, the receiver asks for each lost media packet a round trip later. With
        // `mediaAfterPadding` the media of each 5 ms comes after its padding (a frame arriving at
        // a queue the padding has filled, as the real pacer's padding runs between frames).
        var sequence: Int64 = 0
        var asked: [(dueMicros: Int64, packet: Int64)] = []
        while now < Int64(seconds) * 1_000_000 {
            let due = asked.filter { $0.dueMicros <= now }.map(\.packet)
            if !due.isEmpty {
                asked.removeAll { $0.dueMicros <= now }
                estimator.nacked(due, nowMicros: now)
            }
            let target = estimator.targetBitrate(nowMicros: now)
            let media = min(target, content)
            mediaCredit += Double(media) * 0.005 / 8
            var sentNow = 0
            func send(_ size: Int, media: Bool) {
                estimator.packetSent(sequence: nil, size: size, nowMicros: now)
                sentBits += size * 8
                sentNow += size
                packets += 1
                if media { sequence += 1 }
                guard link.send(size: size, nowMicros: now) == nil else { return }
                lost += 1
                guard media else { return }
                mediaLost += 1
                let rtt = 2 * link.propagationMicros + link.queueDelayMicros(nowMicros: now)
                if nacks { asked.append((now + rtt, sequence)) }
            }
            func sendMedia() {
                while mediaCredit >= 1200 {
                    mediaCredit -= 1200
                    send(1200, media: true)
                }
            }
            if !mediaAfterPadding { sendMedia() }
            if let probe = estimator.probeBitrate(nowMicros: now) {
                // The pacer tops the link up to the probe's rate with ~255-byte padding packets.
                paddingCredit += Double(probe) * 0.005 / 8 - Double(sentNow)
                paddingCredit = max(paddingCredit, -Double(probe) / 8)
                while paddingCredit >= 290 {
                    paddingCredit -= 290
                    send(290, media: false)
                    paddingBits += 290 * 8
                }
            } else {
                paddingCredit = 0
            }
            if mediaAfterPadding { sendMedia() }
            now += 5_000
            if now % 1_000_000 == 0 {
                let rtt = 2 * link.propagationMicros + link.queueDelayMicros(nowMicros: now)
                estimator.roundTrip(milliseconds: Double(rtt) / 1000)
                let fraction = packets > 0 ? Double(lost) / Double(packets) : 0
                estimator.receiverReport(fractionLost: fraction, nowMicros: now)
                let snapshot = estimator.snapshot(nowMicros: now)
                seconds_.append(
                    Second(
                        target: estimator.targetBitrate(nowMicros: now), sent: sentBits, padding: paddingBits,
                        lossFraction: fraction, probe: snapshot.probeBitrate, action: snapshot.reportAction,
                        mediaLost: mediaLost))
                (sentBits, paddingBits, packets, lost, mediaLost) = (0, 0, 0, 0, 0)
            }
        }
        return seconds_
    }

    /// A cheap screen (150 kbit/s) on a clean, fast link: without probes the target stays at the
    /// 300 kbit/s start (the sender never uses it, so nothing shows the link carries more) and the
    /// size follows it down. With them it comes near the maximum in a few seconds, and the padding
    /// stops there; while the encoders still want more, the next probe comes 30 s later.
    @Test func aCheapScreenOnAFastLinkProbesUpToTheMaximumAndStops() {
        let run = Self.simulate(capacity: 50_000_000, content: 150_000, seconds: 45)
        let reached = run.firstIndex { $0.target >= 3_000_000 }
        #expect(reached != nil && reached! <= 9, "\(run.map(\.target))")
        #expect(run[0].padding == 0, "no probe before two reports found the sender application-limited")
        let padded = run.prefix(30).filter { $0.padding > 0 }.count
        #expect(padded <= 9, "padding in \(padded) of the first 30 seconds")
        #expect(run[11..<30].allSatisfy { $0.padding == 0 && $0.probe == nil })
        #expect(run.allSatisfy { $0.lossFraction == 0 })
        #expect(run.last!.target >= 3_000_000, "the estimate holds while the sender is application-limited")
        let later = run.indices.filter { $0 >= 30 && run[$0].padding > 0 }
        #expect(later.count <= 2, "one probe after the rest: \(later)")
    }

    /// The same screen on a 1.5 Mbit/s tail-drop link: the probe past the link finds a queue or
    /// loss and stops; the estimate holds under the link, and the next probe waits 10 s.
    @Test func aProbePastACappedLinkStopsAndTheEstimateStaysUnderIt() {
        let run = Self.simulate(capacity: 1_500_000, content: 150_000, seconds: 30)
        #expect(run.allSatisfy { $0.target <= 1_500_000 }, "\(run.map(\.target))")
        #expect(run.contains { $0.target >= 800_000 }, "the 900 kbit/s probe was delivered: \(run.map(\.target))")
        #expect(run.contains { $0.action?.hasPrefix("probe stopped") == true }, "\(run.compactMap(\.action))")
        // Padding runs in bursts at most, far apart: never two failed probes within 10 s.
        let stops = run.indices.filter { run[$0].action?.hasPrefix("probe stopped") == true }
        for (a, b) in zip(stops, stops.dropFirst()) { #expect(b - a >= 10, "probes stopped at \(stops)") }
        let padded = run.filter { $0.padding > 0 }.count
        #expect(padded <= 10, "padding in \(padded) of 30 seconds")
    }

    /// A probe past a 600 kbit/s link (3 × a 300 kbit/s estimate) that runs until the next report
    /// overflows the link's queue for most of a second, and the media's packets are dropped with
    /// the padding's: more than the retransmission budget repairs. The receiver's NACKs stop it
    /// within a few round trips, and the media loses less than half as much; the probe still counts
    /// as failed (the estimate holds, the next probe waits).
    @Test func aProbeThatMakesTheLinkDropMediaStopsAtTheNACKs() {
        let content = 150_000
        let judged = Self.simulate(capacity: 600_000, content: content, seconds: 12, mediaAfterPadding: true)
        let stopped = Self.simulate(
            capacity: 600_000, content: content, seconds: 12, nacks: true, mediaAfterPadding: true)
        let lostJudged = judged.map(\.mediaLost).reduce(0, +)
        let lostStopped = stopped.map(\.mediaLost).reduce(0, +)
        #expect(judged.contains { $0.action == "probe stopped (loss)" }, "\(judged.compactMap(\.action))")
        // Stopped before the report came: the report finds it over ("hold (after the probe)").
        let probing = stopped.firstIndex { $0.action == "probing" } ?? 0
        #expect(
            stopped[probing + 1].action == "hold (after the probe)" && stopped[probing + 1].probe == nil,
            "\(stopped.compactMap(\.action))")
        #expect(lostJudged >= 10, "the probe that ran to the report lost \(lostJudged) media packets")
        // 13 against 5 here: the three the NACKs name, and those already in the queue then.
        #expect(
            lostStopped * 2 <= lostJudged,
            "media packets lost: \(lostStopped) stopped at the NACKs, \(lostJudged) judged")
        // Padding for a few hundred milliseconds, not the second up to the report.
        let paddingStopped = stopped.map(\.padding).reduce(0, +)
        let paddingJudged = judged.map(\.padding).reduce(0, +)
        #expect(paddingStopped * 2 <= paddingJudged, "padding \(paddingStopped) against \(paddingJudged) bits")
        #expect(stopped.allSatisfy { $0.target <= 600_000 }, "\(stopped.map(\.target))")
    }

    /// NACKs while no probe runs, and fewer than three packets in one, change nothing.
    @Test func nacksOutsideAProbeOrTooFewToMatterLeaveItRunning() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        estimate.nacked([1, 2, 3, 4], nowMicros: 500_000)
        for second in [Int64(1), 2] {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: 50_000, bounds: 100_000...4_000_000,
                nowMicros: second * 1_000_000)
        }
        #expect(estimate.probeBitrate(nowMicros: 2_000_000) == 900_000)
        // A receiver that asks for the same packets again (aiortc lists every packet still missing).
        estimate.nacked([7, 8], nowMicros: 2_100_000)
        estimate.nacked([7, 8], nowMicros: 2_150_000)
        #expect(estimate.probeBitrate(nowMicros: 2_200_000) == 900_000)
        estimate.nacked([9], nowMicros: 2_200_000)
        #expect(estimate.probeBitrate(nowMicros: 2_200_000) == nil)
        #expect(estimate.lastAction == "probe stopped (NACKs)")
    }

    /// A sender that filled an estimate the reports raised, then sends less for a while (a new
    /// size and its keyframe): no probe for 10 s after the last report that raised it; a sender
    /// that stays under it (a screen gone still) is probed then.
    @Test func noProbeSoonAfterTheSenderFilledTheEstimate() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        let bounds = 100_000...4_000_000
        var second: Int64 = 1
        // The reports raise it while the sender fills it: past 1.2 × the start.
        while estimate.estimate < 500_000 {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: estimate.estimate, bounds: bounds,
                nowMicros: second * 1_000_000)
            #expect(estimate.lastAction == "increase")
            second += 1
        }
        let filled = second - 1
        // Then a third of it, report after report.
        var probed: Int64?
        while second < filled + 15, probed == nil {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: estimate.estimate / 3, bounds: bounds,
                nowMicros: second * 1_000_000)
            if estimate.probeBitrate(nowMicros: second * 1_000_000) != nil { probed = second }
            second += 1
        }
        #expect(probed == filled + 10, "filled at \(filled) s, probed at \(probed.map(String.init) ?? "never")")
        // Without that (the same reports from a still screen's start), the probe comes after two.
        var still = ReportBasedEstimate(startBitrate: 300_000)
        for s in Int64(1)...2 {
            still.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: 100_000, bounds: bounds, nowMicros: s * 1_000_000)
        }
        #expect(still.probeBitrate(nowMicros: 2_000_000) != nil)
    }

    /// Repairs wait for their budget while a probe runs and through the aftermath of one that
    /// failed (the padding's loss, with the padding's room to repair it), and at no other time
    /// (loss then is the media's own, and repairs that waited would add to it).
    @Test func repairsWaitOnlyWhileAProbeRunsOrJustFailed() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        #expect(!estimate.repairsMayWait(nowMicros: 0))
        for second in [Int64(1), 2] {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: 50_000, bounds: 100_000...4_000_000,
                nowMicros: second * 1_000_000)
        }
        #expect(estimate.probeBitrate(nowMicros: 2_000_000) != nil)
        #expect(estimate.repairsMayWait(nowMicros: 2_000_000))
        estimate.nacked([7, 8, 9], nowMicros: 2_300_000)
        #expect(estimate.probeBitrate(nowMicros: 2_300_000) == nil)
        #expect(estimate.repairsMayWait(nowMicros: 2_300_000 + ReportBasedEstimate.probeAftermathMicros - 1))
        #expect(!estimate.repairsMayWait(nowMicros: 2_300_000 + ReportBasedEstimate.probeAftermathMicros))
    }

    /// Encoders at their best (a still screen at full size): a higher estimate would not be used,
    /// and no padding is sent for it.
    @Test func noProbeWhileTheEncodersWantNoMore() {
        let run = Self.simulate(capacity: 50_000_000, content: 50_000, seconds: 20, wantMore: false)
        #expect(run.allSatisfy { $0.padding == 0 && $0.probe == nil })
        #expect(run.last!.target == 300_000)
    }

    /// A probe that found congestion: for a minute, later ones stay under 0.85 × its rate, so the
    /// same flood does not come back every time the back-off ends.
    @Test func afterAFailedProbeLaterOnesStayUnderIt() {
        let run = Self.simulate(capacity: 1_500_000, content: 150_000, seconds: 60)
        guard let stop = run.firstIndex(where: { $0.action?.hasPrefix("probe stopped") == true }), stop > 0,
            let failed = run[stop - 1].probe
        else {
            Issue.record("no probe stopped: \(run.compactMap(\.action))")
            return
        }
        for later in run[(stop + 1)...] {
            if let probe = later.probe { #expect(Double(probe) <= 0.85 * Double(failed), "\(probe) after \(failed)") }
        }
    }

    /// A probe that found congestion: the reports after it still count the padding's loss and
    /// queue (a report covers the second before it, and its round trip was measured on a sender
    /// report that waited in the padding's queue). They hold the estimate; congestion after them is
    /// the media's own and cuts it as before.
    @Test func theReportsAfterAFailedProbeDoNotCutTheEstimate() {
        var estimate = ReportBasedEstimate(startBitrate: 500_000)
        var now: Int64 = 0
        func report(_ loss: Double, rttMs: Int64, sent: Int) {
            now += 1_000_000
            estimate.report(
                fractionLost: loss, rttMicros: rttMs * 1000, sentBitrate: sent, bounds: 100_000...4_000_000,
                nowMicros: now)
        }
        // A cheap screen: the second application-limited report starts a probe at 3 × the estimate.
        report(0, rttMs: 20, sent: 200_000)
        report(0, rttMs: 20, sent: 200_000)
        #expect(estimate.probeBitrate(nowMicros: now) == 1_500_000)
        // It overruns the link.
        report(0.13, rttMs: 200, sent: 1_400_000)
        #expect(estimate.lastAction == "probe stopped (loss)" && estimate.estimate == 500_000)
        report(0.3, rttMs: 200, sent: 500_000)
        report(0.2, rttMs: 150, sent: 500_000)
        #expect(estimate.estimate == 500_000, "the padding's loss cut it")
        #expect(estimate.lastAction == "hold (after the probe)")
        report(0.3, rttMs: 200, sent: 500_000)
        #expect(estimate.lastAction == "decrease (loss)" && estimate.estimate < 500_000, "\(estimate.estimate)")
    }

    /// A probe judged delivered by a report that came before the link's queue dropped anything
    /// raised the estimate over the link; the next probe's report shows the loss. What that report
    /// shows delivered (sent less lost) is under the estimate: the media alone overruns the link,
    /// and the estimate comes down to it at once rather than holding through the aftermath. A
    /// failed probe whose delivered rate is over the estimate leaves it as it was (the test above).
    @Test func aFailedProbeWhoseReportShowsLessDeliveredThanTheEstimateTakesItDown() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        var now: Int64 = 0
        func report(_ loss: Double, sent: Int) {
            now += 1_000_000
            estimate.report(
                fractionLost: loss, rttMicros: 20_000, sentBitrate: sent, bounds: 100_000...4_000_000, nowMicros: now)
        }
        report(0, sent: 150_000)
        report(0, sent: 150_000)
        #expect(estimate.probeBitrate(nowMicros: now) == 900_000)
        report(0, sent: 846_000)
        #expect(estimate.lastAction == "probe delivered" && estimate.estimate == 846_000)
        #expect(estimate.probeBitrate(nowMicros: now) == 1_269_000)
        report(0.44, sent: 900_000)
        #expect(estimate.lastAction == "probe stopped (loss)")
        #expect(estimate.estimate == 504_000, "\(estimate.estimate)")
        report(0.3, sent: 500_000)
        #expect(estimate.estimate == 504_000 && estimate.lastAction == "hold (after the probe)")
    }

    /// A busy share's first report finds little sent (the encoder starting, its first keyframe):
    /// that is not cheap content, and it is not probed.
    @Test func theStartOfABusyShareIsNotProbed() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        let bounds = 100_000...4_000_000
        for (second, sent) in [(1, 80_000), (2, 300_000), (3, 100_000), (4, 320_000)] {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: sent, bounds: bounds,
                nowMicros: Int64(second) * 1_000_000)
            #expect(estimate.probeBitrate(nowMicros: Int64(second) * 1_000_000) == nil, "second \(second)")
        }
        // The fourth report raised the estimate past 1.2 × the start on what was sent: the sender
        // filled it, and what it sends less after that is not probed for 10 s.
        #expect(estimate.estimate > 360_000 && estimate.lastAction == "increase")
        var probed: Int?
        for second in 5...20 where probed == nil {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: 90_000, bounds: bounds,
                nowMicros: Int64(second) * 1_000_000)
            if estimate.probeBitrate(nowMicros: Int64(second) * 1_000_000) != nil { probed = second }
        }
        #expect(probed == 14, "cheap content from the fifth second, probed at \(probed ?? 0)")
    }

    /// The first probe goes to 3 × the estimate only near the start rate: once the reports have
    /// raised the estimate (the sender filled it), a share that stays application-limited is
    /// probed 10 s after the last increase, at 1.5 × it, not past the link for a second.
    @Test func aFirstProbeAfterTheEstimateClimbedStaysNearIt() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        var now: Int64 = 0
        func report(sent: Int) {
            now += 1_000_000
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: sent, bounds: 100_000...4_000_000, nowMicros: now)
        }
        // A busy share fills its estimate as it climbs.
        while estimate.estimate < 650_000 { report(sent: estimate.estimate) }
        let climbed = estimate.estimate
        // Application-limited from here: probed 10 s after the last report that raised it.
        for _ in 0..<9 {
            report(sent: climbed / 2)
            #expect(estimate.probeBitrate(nowMicros: now) == nil)
        }
        report(sent: climbed / 2)
        let probe = estimate.probeBitrate(nowMicros: now)
        #expect(probe == Int(Double(climbed) * ReportBasedEstimate.probeStep), "\(probe ?? 0) over \(climbed)")
    }

    /// An estimate the reports raised by more than the start's first step (here to 1.33 × the
    /// start) was filled: the first probe is 1.5 × it, not 3 × (1,200 kbit/s, twice a 600 kbit/s
    /// link). A still screen whose first report raised it once is still probed at 3 ×.
    @Test func aFirstProbeAfterTheReportsRaisedTheEstimateTwiceIsHalfAgainIt() {
        func firstProbe(climbingTo level: Int) -> (estimate: Int, probe: Int?) {
            var estimate = ReportBasedEstimate(startBitrate: 300_000)
            var now: Int64 = 0
            func report(sent: Int) {
                now += 1_000_000
                estimate.report(
                    fractionLost: 0, rttMicros: 20_000, sentBitrate: sent, bounds: 100_000...4_000_000,
                    nowMicros: now)
            }
            while estimate.estimate < level { report(sent: estimate.estimate) }
            let climbed = estimate.estimate
            // Application-limited until the first probe (at most 10 s after the last increase).
            for _ in 0..<10 where estimate.probeBitrate(nowMicros: now) == nil { report(sent: climbed / 2) }
            return (climbed, estimate.probeBitrate(nowMicros: now))
        }
        // 300 → 346 → 399 kbit/s: two reports' increases.
        let filled = firstProbe(climbingTo: 390_000)
        #expect(filled.estimate >= 390_000 && filled.estimate < 450_000)
        #expect(filled.probe == Int(Double(filled.estimate) * 1.5), "\(filled)")
        let once = firstProbe(climbingTo: 301_000)
        #expect(once.estimate <= 360_000)
        #expect(once.probe == once.estimate * 3, "\(once)")
    }

    /// A probe no report judges (the receiver stopped reporting) stops on its own.
    @Test func aProbeNoReportJudgesStops() {
        var estimate = ReportBasedEstimate(startBitrate: 300_000)
        for second in [Int64(1), 2] {
            estimate.report(
                fractionLost: 0, rttMicros: 20_000, sentBitrate: 50_000, bounds: 100_000...4_000_000,
                nowMicros: second * 1_000_000)
        }
        #expect(estimate.probeBitrate(nowMicros: 2_000_000) == 900_000)
        #expect(estimate.probeBitrate(nowMicros: 4_900_000) == 900_000)
        #expect(estimate.probeBitrate(nowMicros: 5_000_000) == nil)
    }
}

extension PacerTests {
    /// Padding tops an idle pacer up to its rate, counting what the queues released against it,
    /// and leaves nothing while packets wait.
    @Test func paddingTopsAnIdleQueueUpToItsRate() {
        var pacer = Pacer<Int>(targetBitrate: 300_000)
        pacer.setPaddingBitrate(1_000_000)
        var padding = 0
        var now: Int64 = 0
        _ = pacer.paddingDue(nowMicros: now)
        while now < 1_000_000 {
            now += 2_000
            if now == 500_000 {
                // 20 kB of media at once: padding waits until it has left and is counted in.
                for i in 0..<20 { pacer.enqueue(i, size: 1000, priority: .video, nowMicros: now) }
                #expect(pacer.paddingDue(nowMicros: now) == 0)
            }
            _ = pacer.release(nowMicros: now)
            padding += pacer.paddingDue(nowMicros: now)
        }
        // 1 Mbit/s for a second is 125 kB: 105 kB of padding beside the 20 kB of media.
        #expect(padding > 100_000 && padding < 108_000, "\(padding) bytes of padding")
        #expect(pacer.counters.paddingBytes == padding)
        pacer.setPaddingBitrate(0)
        #expect(pacer.paddingDue(nowMicros: now + 100_000) == 0)
    }
}
