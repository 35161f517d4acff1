import CallsClient
import RTPWire
import ShareCore
import Synchronization
import Testing
import VideoSend
@testable import CallMedia

/// The peer connection's pure parts: reception statistics, the PLI policy, RTP routing.
@Suite struct PeerConnectionPartsTests {
    @Test func receptionStatisticsCountAcrossTheWrapAndReportLoss() {
        var stats = ReceptionStatistics(ssrc: 7, clockRate: 90_000)
        for (i, sequence) in [UInt16(65534), 65535, 0, 2].enumerated() {
            stats.received(
                sequenceNumber: sequence, timestamp: UInt32(i) * 3000, bytes: 100, arrivalMicros: Int64(i) * 33_333)
        }
        #expect(stats.extendedHighestSequence == 65536 + 2)
        #expect(stats.expected == 5 && stats.packetsReceived == 4 && stats.cumulativeLost == 1)
        stats.senderReportReceived(
            ntp: NTPTimestamp(seconds: 0x0001_0002, fraction: 0x0003_0000), arrivalMicros: 1_000_000)
        let report = stats.report(nowMicros: 1_500_000)
        #expect(report.ssrc == 7 && report.cumulativeLost == 1 && report.fractionLost == 51)  // 1/5 × 256
        #expect(report.lastSenderReport == 0x0002_0003)
        #expect(report.delaySinceLastSenderReport == 32768, "half a second in 1/65536 s")
        let next = stats.report(nowMicros: 2_000_000)
        #expect(next.fractionLost == 0, "nothing expected since the last report")
    }

    /// Ten years of uptime on a microsecond clock: arrival × a 90 kHz clock rate no longer fits
    /// in 64 bits, nor a decade since the last sender report × 65536. Nothing traps, the jitter
    /// of a steady 30 fps stream stays near zero, and the DLSR saturates.
    @Test func receptionStatisticsAtTenYearsOfUptime() {
        let tenYears: Int64 = 10 * 365 * 86_400 * 1_000_000
        var stats = ReceptionStatistics(ssrc: 7, clockRate: 90_000)
        stats.senderReportReceived(ntp: NTPTimestamp(seconds: 1, fraction: 0), arrivalMicros: 0)
        for i in 0..<30 {
            stats.received(
                sequenceNumber: UInt16(i), timestamp: UInt32(i) * 3000, bytes: 100,
                arrivalMicros: tenYears + Int64(i) * 33_333)
        }
        #expect(stats.packetsReceived == 30 && stats.cumulativeLost == 0)
        #expect(stats.jitter <= 1, "steady 30 fps: \(stats.jitter)")
        let report = stats.report(nowMicros: tenYears + 1_000_000)
        #expect(report.delaySinceLastSenderReport == UInt32.max)
        #expect(report.jitter <= 1)
    }

    @Test func keyframeRequestsWaitThreeHundredMilliseconds() {
        var policy = KeyframeRequestPolicy()
        // (waiting, now) → asked; the timeline as a marble: "n y - - y".
        let asked = [(false, 0), (true, 0), (true, 100_000), (true, 299_999), (true, 300_000)].map {
            policy.shouldRequest(waitingForKeyframe: $0.0, nowMicros: Int64($0.1))
        }
        #expect(asked == [false, true, false, false, true])
    }

    /// A decoder that swallows whole frames (nothing decodes, nothing is missing) asks once it has
    /// given nothing for 3 s, then every 3 s; a decoded picture starts the count again.
    /// Asked again after two keyframes within 2 s: the keyframe did not get through, and the
    /// encoder is told to make the next one smaller.
    @Test func aThirdRequestWithinTwoSecondsAsksForASmallerKeyframe() {
        let asks = Locked<[RTCPReceiver.KeyframeAsk]>([])
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 5, payloadType: 96, clockRate: 90_000),
            transportSequence: nil
        ) { _ in true }
        let rtcp = RTCPReceiver(video: sender, audioSSRC: nil) { ask in asks.withLock { $0.append(ask) } }
        let pli = PictureLossIndication(senderSSRC: 1, mediaSSRC: 5).serialize()
        // 0 and 0.35 s: answered; 1.0 s: within the 1 s that follows two; 1.4 s: asked again;
        // 5 s: long after, a plain keyframe.
        for now: Int64 in [0, 350_000, 1_000_000, 1_400_000, 5_000_000] { rtcp.receive(pli, nowMicros: now) }
        #expect(asks.withLock { $0 } == [.keyframe, .keyframe, .keyframeDidNotGetThrough, .keyframe])
        #expect(rtcp.figures.keyframesAsked == 4 && rtcp.figures.smallerKeyframesAsked == 1)
    }

    /// The receiver's first RTCP asks for a keyframe: the first keyframes may have gone out before
    /// it held the keys (our side of DTLS finishes first when its last flight is lost). Once only;
    /// not when that first compound asks for one itself, or is transport-wide feedback showing our
    /// first packet arrived; a PLI right after it waits the 300 ms.
    @Test func theReceiversFirstReportAsksForAKeyframeOnce() throws {
        func receiver() -> (RTCPReceiver, Locked<[RTCPReceiver.KeyframeAsk]>) {
            let asks = Locked<[RTCPReceiver.KeyframeAsk]>([])
            let sender = RTPStreamSender(
                configuration: .init(ssrc: 5, payloadType: 96, clockRate: 90_000),
                transportSequence: nil
            ) { _ in true }
            return (RTCPReceiver(video: sender, audioSSRC: nil) { ask in asks.withLock { $0.append(ask) } }, asks)
        }
        let report = try RTCPCompound.serialize([
            .receiverReport(
                ReceiverReport(ssrc: 1, reports: [ReceptionReport(ssrc: 5, extendedHighestSequenceNumber: 100)]))
        ])
        let pli = PictureLossIndication(senderSSRC: 1, mediaSSRC: 5).serialize()
        let (rtcp, asks) = receiver()
        // Reports at 0, 1 and 2 s (the first asks), a PLI at 0.1 s (within 300 ms: waits) and 0.5 s.
        rtcp.receive(report, nowMicros: 0)
        rtcp.receive(pli, nowMicros: 100_000)
        rtcp.receive(pli, nowMicros: 500_000)
        rtcp.receive(report, nowMicros: 1_000_000)
        rtcp.receive(report, nowMicros: 2_000_000)
        #expect(asks.withLock { $0 } == [.keyframe, .keyframe])
        #expect(rtcp.figures.keyframeOnFirstReport && rtcp.figures.keyframesAsked == 1 && rtcp.figures.pli == 2)
        // A first compound that is a PLI: its own request, nothing more.
        let (asking, asked) = receiver()
        asking.receive(pli, nowMicros: 0)
        asking.receive(report, nowMicros: 1_000_000)
        #expect(asked.withLock { $0 } == [.keyframe] && !asking.figures.keyframeOnFirstReport)
        // Transport-wide feedback that shows our first packet arrived: the receiver has the start.
        let fromTheStart = try TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 5, feedbackPacketCount: 0,
            arrivals: [(sequenceNumber: 0, arrivalTime: .milliseconds(10)), (1, .milliseconds(11))])
        let (started, heard) = receiver()
        started.receive(try RTCPCompound.serialize([.transportWideFeedback(fromTheStart)]), nowMicros: 0)
        started.receive(report, nowMicros: 1_000_000)
        #expect(heard.withLock { $0 }.isEmpty && !started.figures.keyframeOnFirstReport)
        // Feedback that begins later (the first packets never arrived, or could not be decrypted) asks.
        let late = try TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 5, feedbackPacketCount: 0,
            arrivals: [(sequenceNumber: 40, arrivalTime: .milliseconds(10))])
        let (lateStart, lateHeard) = receiver()
        lateStart.receive(try RTCPCompound.serialize([.transportWideFeedback(late)]), nowMicros: 0)
        #expect(lateHeard.withLock { $0 } == [.keyframe] && lateStart.figures.keyframeOnFirstReport)
        // Malformed RTCP is not the receiver heard.
        let (garbled, none) = receiver()
        garbled.receive([0x80, 0xC9, 0x00], nowMicros: 0)
        #expect(none.withLock { $0 }.isEmpty && garbled.figures.malformed == 1)
    }

    @Test func aStuckDecoderAsksEveryThreeSeconds() {
        var policy = KeyframeRequestPolicy()
        // Once a second: frames assembled, frames decoded → asked.
        let timeline: [(Int, Int)] = [
            (30, 30), (60, 60), (90, 60), (120, 60), (150, 60), (180, 60), (210, 60), (240, 60), (270, 60),
            (300, 61), (330, 61), (360, 61), (390, 61)
        ]
        let asked = timeline.enumerated().map { second, counts in
            policy.shouldRequest(
                waitingForKeyframe: false, framesAssembled: counts.0, framesDecoded: counts.1,
                nowMicros: Int64(second) * 1_000_000)
        }
        // Last progress at 1 s: asked at 4 s and 7 s; progress at 9 s: asked again at 12 s.
        #expect(asked.enumerated().filter(\.element).map(\.offset) == [4, 7, 12])
        var idle = KeyframeRequestPolicy()
        let nothingArrives = (0..<10).map {
            idle.shouldRequest(
                waitingForKeyframe: false, framesAssembled: 30, framesDecoded: 30, nowMicros: Int64($0) * 1_000_000)
        }
        #expect(!nothingArrives.contains(true), "no frames arriving is not a stuck decoder")
    }

    /// Regression: the first PLI subtracted from an `Int64.min` sentinel and trapped; found when
    /// our own receiver began sending PLIs.
    @Test func firstPictureLossIndicationAsksForAKeyframeThenEveryThreeHundredMilliseconds() {
        let asked = Atomic<Int>(0)
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 5, payloadType: 96, clockRate: 90_000),
            transportSequence: nil
        ) { _ in true }
        let rtcp = RTCPReceiver(video: sender, audioSSRC: nil) { _ in asked.add(1, ordering: .relaxed) }
        let pli = PictureLossIndication(senderSSRC: 1, mediaSSRC: 5).serialize()
        for now: Int64 in [1_000, 100_000, 301_000] { rtcp.receive(pli, nowMicros: now) }
        #expect(asked.load(ordering: .relaxed) == 2)
        #expect(rtcp.figures.pli == 3 && rtcp.figures.keyframesAsked == 2)
    }

    /// A receiver that keeps asking gets a keyframe once a second, not every 300 ms: two answered
    /// in the last two seconds and the interval is a second.
    @Test func aReceiverThatKeepsAskingGetsAKeyframeOnceASecond() {
        let asked = Atomic<Int>(0)
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 5, payloadType: 96, clockRate: 90_000),
            transportSequence: nil
        ) { _ in true }
        let rtcp = RTCPReceiver(video: sender, audioSSRC: nil) { _ in asked.add(1, ordering: .relaxed) }
        let pli = PictureLossIndication(senderSSRC: 1, mediaSSRC: 5).serialize()
        var answeredAt: [Int64] = []
        for now in stride(from: Int64(0), to: 5_000_000, by: 50_000) {
            let before = asked.load(ordering: .relaxed)
            rtcp.receive(pli, nowMicros: now)
            if asked.load(ordering: .relaxed) > before { answeredAt.append(now) }
        }
        #expect(answeredAt.prefix(2) == [0, 300_000], "\(answeredAt)")
        #expect(
            zip(answeredAt.dropFirst(2), answeredAt.dropFirst(1)).allSatisfy { $0 - $1 >= 1_000_000 }, "\(answeredAt)")
        #expect(answeredAt.count <= 7, "\(answeredAt.count) keyframes in 5 s of PLIs every 50 ms")
    }

    @Test func routesBySSRCThenMidThenPayloadType() throws {
        var router = RTPRouter(
            entries: [
                .init(index: 0, mid: "0", payloadType: 96, rtxPayloadType: 97, ssrc: 1111, rtxSSRC: 2222),
                .init(index: 1, mid: "1", payloadType: 111, rtxPayloadType: nil, ssrc: nil, rtxSSRC: nil)
            ], midExtensionID: 1)
        func packet(ssrc: UInt32, pt: UInt8, mid: String? = nil) throws -> RTPPacket {
            var p = RTPPacket(marker: false, payloadType: pt, sequenceNumber: 1, timestamp: 0, ssrc: ssrc, payload: [1])
            if let mid { try p.setHeaderExtensionElements([HeaderExtensionElement(id: 1, data: Array(mid.utf8))]) }
            return p
        }
        do { let got = router.route(try packet(ssrc: 1111, pt: 96)); #expect(got == .init(index: 0, isRTX: false)) }
        do { let got = router.route(try packet(ssrc: 2222, pt: 97)); #expect(got == .init(index: 0, isRTX: true)) }
        do {
            let got = router.route(try packet(ssrc: 5, pt: 111, mid: "1"));
            #expect(got == .init(index: 1, isRTX: false))
        }
        do {
            let got = router.route(try packet(ssrc: 5, pt: 111));
            #expect(got == .init(index: 1, isRTX: false), "learned")
        }
        do {
            let got = router.route(try packet(ssrc: 6, pt: 111));
            #expect(got == .init(index: 1, isRTX: false), "by payload type")
        }
        do { let got = router.route(try packet(ssrc: 8, pt: 50)); #expect(got == nil, "no transceiver takes type 50") }
        do {
            let got = router.route(try packet(ssrc: 9, pt: 96, mid: "1"));
            #expect(got == nil, "mid 1 does not carry type 96")
        }
    }

    /// Regression: when a screen share stopped, its last packets (MID "2", the camera's payload
    /// type) arrived after the section stopped receiving and were routed by payload type to the
    /// camera, whose reorder buffer then followed the screen's sequence numbers and stalled.
    @Test func aPacketNamingASectionThatReceivesNothingIsDropped() throws {
        var router = RTPRouter(
            entries: [.init(index: 1, mid: "1", payloadType: 96, rtxPayloadType: 97, ssrc: nil, rtxSSRC: nil)],
            midExtensionID: 3)
        var screen = RTPPacket(
            marker: false, payloadType: 96, sequenceNumber: 40_000, timestamp: 0, ssrc: 77, payload: [1])
        try screen.setHeaderExtensionElements([HeaderExtensionElement(id: 3, data: Array("2".utf8))])
        #expect(router.route(screen) == nil)
        var camera = RTPPacket(marker: false, payloadType: 96, sequenceNumber: 5, timestamp: 0, ssrc: 55, payload: [1])
        try camera.setHeaderExtensionElements([HeaderExtensionElement(id: 3, data: Array("1".utf8))])
        #expect(router.route(camera) == .init(index: 1, isRTX: false))
        let unnamed = RTPPacket(marker: false, payloadType: 96, sequenceNumber: 6, timestamp: 0, ssrc: 56, payload: [1])
        #expect(router.route(unnamed) == .init(index: 1, isRTX: false), "no MID: by payload type as before")
    }

    /// Regression: after a share again the last packets of the replaced screen section (SSRC
    /// announced for mid 3, now inactive) reached the new section's receiver (mid 4, the only one
    /// receiving payload type 96) through a router made afresh that had forgotten that SSRC. One
    /// packet of the old stream set the new receiver's reorder buffer to its sequence numbers; the
    /// new stream's then counted as late and were all dropped (no frame assembled). The router
    /// after a renegotiation follows the last one: a stream of a section that stopped receiving is
    /// dropped unless its MID says where it goes.
    @Test func aStreamOfASectionThatStoppedReceivingIsNotTakenByTheSectionAfterIt() throws {
        var before = RTPRouter(
            entries: [
                .init(index: 3, mid: "3", payloadType: 96, rtxPayloadType: 97, ssrc: 3951, rtxSSRC: 3952)
            ], midExtensionID: 3)
        #expect(before.route(try packet(ssrc: 3951, pt: 96)) == .init(index: 3, isRTX: false))
        // The share again: mid 3 inactive, mid 4 receives the new screen.
        var after = RTPRouter(
            entries: [
                .init(index: 4, mid: "4", payloadType: 96, rtxPayloadType: 97, ssrc: 2796, rtxSSRC: 2797)
            ], midExtensionID: 3
        ).following(before)
        #expect(after.route(try packet(ssrc: 3951, pt: 96)) == nil, "the old screen without a MID")
        #expect(after.route(try packet(ssrc: 3952, pt: 97)) == nil, "the old screen's RTX without a MID")
        #expect(after.route(try packet(ssrc: 3951, pt: 96, mid: "3")) == nil, "the old screen naming its mid")
        #expect(after.route(try packet(ssrc: 2796, pt: 96)) == .init(index: 4, isRTX: false), "the new screen")
        #expect(
            after.route(try packet(ssrc: 8000, pt: 96)) == .init(index: 4, isRTX: false),
            "a stream never seen: by payload type as before")
        // Another exchange: what was retired stays so, unless a MID naming a receiving section says otherwise.
        var later = RTPRouter(
            entries: [
                .init(index: 4, mid: "4", payloadType: 96, rtxPayloadType: 97, ssrc: nil, rtxSSRC: nil)
            ], midExtensionID: 3
        ).following(after)
        #expect(later.route(try packet(ssrc: 3951, pt: 96)) == nil, "still retired")
        #expect(
            later.route(try packet(ssrc: 3952, pt: 96, mid: "4")) == .init(index: 4, isRTX: false), "named by its MID")
        #expect(later.route(try packet(ssrc: 3952, pt: 96)) == .init(index: 4, isRTX: false), "and learned again")
        // A section that announces another SSRC for itself retires the one it had.
        var reannounced = RTPRouter(
            entries: [
                .init(index: 4, mid: "4", payloadType: 96, rtxPayloadType: 97, ssrc: 7000, rtxSSRC: 7001)
            ], midExtensionID: 3
        ).following(later)
        #expect(reannounced.route(try packet(ssrc: 2796, pt: 96)) == nil, "mid 4's stream before")
        #expect(reannounced.route(try packet(ssrc: 7000, pt: 96)) == .init(index: 4, isRTX: false))
    }

    /// A renegotiation that keeps a section receiving keeps the streams learned for it: without a
    /// MID (a sender that writes it only at first) and with its payload type shared by another
    /// section, a router made afresh could no longer place them.
    @Test func aRenegotiationKeepsTheStreamsLearnedForASectionThatStillReceives() throws {
        let camera = RTPRouter.Entry(index: 1, mid: "1", payloadType: 96, rtxPayloadType: 97, ssrc: nil, rtxSSRC: nil)
        var before = RTPRouter(entries: [camera], midExtensionID: 3)
        #expect(before.route(try packet(ssrc: 55, pt: 96, mid: "1")) == .init(index: 1, isRTX: false))
        var after = RTPRouter(
            entries: [camera, .init(index: 2, mid: "2", payloadType: 96, rtxPayloadType: 97, ssrc: nil, rtxSSRC: nil)],
            midExtensionID: 3
        ).following(before)
        #expect(after.route(try packet(ssrc: 55, pt: 96)) == .init(index: 1, isRTX: false))
        var changed = camera
        changed.payloadType = 98
        var recoded = RTPRouter(entries: [changed], midExtensionID: 3).following(before)
        #expect(
            recoded.route(try packet(ssrc: 55, pt: 96)) == nil,
            "another payload type now: learned anew, and 96 is not it")
    }

    private func packet(ssrc: UInt32, pt: UInt8, mid: String? = nil) throws -> RTPPacket {
        var p = RTPPacket(
            marker: false, payloadType: pt, sequenceNumber: 20_315, timestamp: 0, ssrc: ssrc, payload: [1])
        if let mid { try p.setHeaderExtensionElements([HeaderExtensionElement(id: 3, data: Array(mid.utf8))]) }
        return p
    }
}
