import Foundation
import RTPWire
import ShareCore
import VideoSend

/// One peer connection's congestion control: the send chain's last two stages (the pacer and the
/// transport stamp, which tells the estimate each packet's send time), the `BandwidthEstimator`
/// that transport-wide feedback and REMB arriving on the loop thread update, and once a second the
/// target split over the video encoders (the audio keeps `audioReserve`).
///
/// Thread-safe: packets come from media threads (queued) and the pacer's thread (stamped and
/// sent); feedback and the once-a-second tick run on the GLib loop thread.
final class CongestionController: Sendable {
    /// What the Opus stream is left, off the top of the estimate (32 kbit/s of Opus and headers).
    static let audioReserve = 40_000
    /// Without transport-wide feedback, while a probe runs or just failed
    /// (`BandwidthEstimator.repairsMayWait`), a retransmission over the budget waits for it this
    /// long (`Pacer.setRepairWait`): a receiver that asks once for each packet (aiortc) holds its
    /// picture behind an unrepaired hole until its jitter buffer gives up. With feedback the
    /// receiver is libwebrtc's, whose NACK module asks again every round trip.
    static let repairWaitMicros: Int64 = 1_000_000
    /// An encoder is told a new bitrate when it differs by at least this fraction.
    static let encoderStep = 0.05
    /// Where a video encoder starts before the first second's split: the estimate's start less
    /// the audio.
    static let startVideoBitrate = BandwidthEstimator.Configuration().startBitrate - audioReserve

    let pacer: PacedSender
    private let estimator: Locked<BandwidthEstimator>
    /// REMBs per set of streams, added up (aiortc sends one per stream).
    private let rembs = Locked(REMBSum())
    /// Loss counted in packets over the receiver reports (one report's fraction is noise at low rates).
    private let reportedLoss = Locked(ReportedLoss())
    /// Retransmissions' share of the link, taken off the encoders' targets.
    private let repair = Locked(RepairCost())
    /// The video packets' headers on the wire, taken off the encoders' targets too.
    private let overhead = Locked(PacketOverhead())
    /// The media of the last tick and the target split over them then: a decrease between ticks
    /// reaches the encoders at once (a second's wait at a rate over the link is a second of loss).
    private let split = Locked<(medias: [TransceiverMedia], target: Int)>(([], 0))
    private let logger: Logger

    init(
        transportSequence: TransportSequenceCounter, configuration: BandwidthEstimator.Configuration = .init(),
        logger: Logger, send: @escaping @Sendable ([UInt8]) -> Bool
    ) {
        self.logger = logger
        let estimator = Locked(BandwidthEstimator(configuration: configuration))
        self.estimator = estimator
        let stamp = TransportStamp.writer(
            sequence: transportSequence,
            sent: { sequence, size, cluster, now in
                // The estimate counts what the link carries: each packet with its SRTP tag and its
                // UDP and IPv4 headers (what `PacketOverhead` takes off the encoders again).
                let wire = size + PacketOverhead.transportBytes
                estimator.withLock {
                    $0.packetSent(sequence: sequence, size: wire, probeCluster: cluster, nowMicros: now)
                }
            }, next: send)
        pacer = PacedSender(targetBitrate: configuration.startBitrate, next: stamp)
    }

    /// The stage the streams write into.
    var writer: PacketWriter { { [pacer] in pacer.write($0, nowMicros: $1) } }

    /// The fraction of our packets lost, counted over the recent reports (`ReportedLoss`); until two
    /// reports have shown packets, the worst of this report's own fractions.
    private func fractionLost(_ blocks: [ReceptionReport], nowMicros: Int64) -> Double {
        let counted = reportedLoss.withLock { loss in
            loss.report(
                blocks.map {
                    .init(
                        ssrc: $0.ssrc, extendedHighestSequence: $0.extendedHighestSequenceNumber,
                        cumulativeLost: $0.cumulativeLost)
                }, nowMicros: nowMicros)
            return loss.fraction(nowMicros: nowMicros)
        }
        return counted ?? blocks.map { Double($0.fractionLost) / 256 }.max() ?? 0
    }

    /// Feedback from one RTCP compound (loop thread); `rttMs` is the round trip the streams' RTCP
    /// receivers have measured (from this compound's reports too).
    func receive(_ packets: [RTCPPacket], medias: [TransceiverMedia] = [], rttMs: Double? = nil, nowMicros: Int64) {
        var changed = false
        if let rttMs { estimator.withLock { $0.roundTrip(milliseconds: rttMs) } }
        for packet in packets {
            switch packet {
            case .receiverReport(let report) where !report.reports.isEmpty:
                let lost = fractionLost(report.reports, nowMicros: nowMicros)
                estimator.withLock { $0.receiverReport(fractionLost: lost, nowMicros: nowMicros) }
                changed = true
            case .senderReport(let report) where !report.reports.isEmpty:
                let lost = fractionLost(report.reports, nowMicros: nowMicros)
                estimator.withLock { $0.receiverReport(fractionLost: lost, nowMicros: nowMicros) }
                changed = true
            case .genericNACK(let nack):
                // Only a probe the NACKs stopped changes anything (its padding ends).
                let packets = nack.entries.flatMap(\.sequenceNumbers).map { Int64(nack.mediaSSRC) << 16 | Int64($0) }
                if estimator.withLock({ $0.nacked(packets, nowMicros: nowMicros) }) { changed = true }
            case .transportWideFeedback(let feedback):
                estimator.withLock { $0.transportFeedback(feedback, nowMicros: nowMicros) }
                changed = true
            case .receiverEstimatedMaxBitrate(let remb):
                let total = rembs.withLock {
                    $0.received(bitrate: Int(clamping: remb.bitrate), ssrcs: remb.ssrcs, nowMicros: nowMicros)
                }
                estimator.withLock { $0.receiverEstimatedMaximum(total, nowMicros: nowMicros) }
                changed = true
            default:
                continue
            }
        }
        guard changed else { return }
        let (target, wait) = estimator.withLock {
            ($0.targetBitrate(nowMicros: nowMicros), $0.repairsMayWait(nowMicros: nowMicros))
        }
        pacer.setTargetBitrate(target)
        pacer.setRepairWait(wait ? Self.repairWaitMicros : 0)
        let last = split.withLock { $0 }
        updatePadding(medias: last.medias, nowMicros: nowMicros)
        startProbeClusters(medias: medias.isEmpty ? last.medias : medias, nowMicros: nowMicros)
        if !last.medias.isEmpty, Double(target) < Double(last.target) * (1 - Self.encoderStep) {
            apply(target: target, to: last.medias, nowMicros: nowMicros, measureRepair: false)
        }
    }

    /// The encoder side says whether the CPU is what holds the rate down.
    func setLimitedByCPU(_ limited: Bool) { estimator.withLock { $0.setLimitedByCPU(limited) } }

    /// Once a second (loop thread): the round trip in, the target out to the pacer and the video
    /// encoders. (Receiver reports and feedback move the estimate as they arrive, in `receive`,
    /// which passes a decrease on to the encoders at once.)
    func tick(medias: [TransceiverMedia], nowMicros: Int64) {
        let video = medias.filter { $0.encoder != nil }
        let hasAudio = medias.contains { $0.audioSender != nil }
        let reserve = hasAudio ? Self.audioReserve : 0
        let maximum = video.reduce(0) { $0 + $1.maximumBitrate }
        let feedback = medias.compactMap { $0.rtcp?.figures }
        let wantMore = video.contains { $0.encoders.contains { $0.counters.limit == .bandwidth } }
        let (target, wait) = estimator.withLock { e -> (Int, Bool) in
            if maximum > 0 { e.setMaximumBitrate(maximum + reserve) }
            e.setEncodersWantMore(wantMore)
            if let rtt = feedback.compactMap(\.rttMs).first { e.roundTrip(milliseconds: rtt) }
            return (e.targetBitrate(nowMicros: nowMicros), e.repairsMayWait(nowMicros: nowMicros))
        }
        pacer.setTargetBitrate(target)
        pacer.setRepairWait(wait ? Self.repairWaitMicros : 0)
        updatePadding(medias: medias, nowMicros: nowMicros)
        startProbeClusters(medias: medias, nowMicros: nowMicros)
        logger.debug("congestion", Self.metadata(statistics(medias: medias, nowMicros: nowMicros)))
        apply(target: target, to: medias, nowMicros: nowMicros, measureRepair: true)
    }

    /// A probe of the estimate's running: the pacer tops the link up to its rate with padding on
    /// the padding stream (a receiver drops RTX padding); without one, no padding.
    private func updatePadding(medias: [TransceiverMedia], nowMicros: Int64) {
        let probe = estimator.withLock { $0.probeBitrate(nowMicros: nowMicros) }
        guard let probe, let stream = RTPStreamSender.paddingStream(among: medias.flatMap(\.senders)) else {
            pacer.setPadding(bitsPerSecond: 0, source: nil)
            return
        }
        pacer.setPadding(bitsPerSecond: probe) { [weak stream] bytes in stream?.paddingPackets(bytes: bytes) ?? [] }
    }

    /// The estimate's probe clusters, when it has some, go to the pacer, topped up with padding on
    /// the padding stream (none without one: they wait in the estimate).
    private func startProbeClusters(medias: [TransceiverMedia], nowMicros: Int64) {
        guard let stream = RTPStreamSender.paddingStream(among: medias.flatMap(\.senders)) else { return }
        let clusters = estimator.withLock { $0.takeProbeClusters(nowMicros: nowMicros) }
        guard !clusters.isEmpty else { return }
        logger.debug("probe clusters: \(clusters.map { "\($0.bitrate / 1000) kbit/s" }.joined(separator: ", "))")
        pacer.startProbeClusters(clusters) { [weak stream] bytes in stream?.paddingPackets(bytes: bytes) ?? [] }
    }

    /// Splits what is left of `target` after the audio, the video packets' overhead and the repair
    /// over the video encoders in proportion to their maxima (`measureRepair`: the once-a-second
    /// tick, which also measures what retransmissions and packet headers cost since the last).
    private func apply(target: Int, to medias: [TransceiverMedia], nowMicros: Int64, measureRepair: Bool) {
        let video = medias.filter { $0.encoder != nil }
        let maximum = video.reduce(0) { $0 + $1.maximumBitrate }
        split.withLock { $0 = (medias, target) }
        guard maximum > 0 else { return }
        let headers = overhead.withLock { o -> Int in
            if measureRepair {
                let counters = video.flatMap(\.senders).map(\.counters)
                o.update(
                    packets: counters.reduce(0) { $0 + $1.packetsSent },
                    headerBytes: counters.reduce(0) { $0 + $1.headerBytesSent }, nowMicros: nowMicros)
            }
            return Int(o.bitsPerSecond)
        }
        let reserve = (medias.contains { $0.audioSender != nil } ? Self.audioReserve : 0) + headers
        let repairBytes = pacer.snapshot().counters.retransmissionBytes
        let forVideo = repair.withLock {
            if measureRepair { $0.update(totalBytes: repairBytes, nowMicros: nowMicros) }
            return $0.videoBitrate(target: target, reserve: reserve)
        }
        for media in video {
            let share = Int(Double(forVideo) * Double(media.maximumBitrate) / Double(maximum))
            media.applyTargetBitrate(min(share, media.maximumBitrate), step: Self.encoderStep)
        }
    }

    private static func metadata(_ c: CongestionStatistics) -> Logger.Metadata {
        let e = c.estimate
        return [
            "cc.targetKbps": "\(c.targetBitrate / 1000)", "cc.limitedBy": c.limitedBy.rawValue,
            "cc.delayKbps": "\(e.delayBasedBitrate / 1000)", "cc.delayState": e.delayState,
            "cc.ackedKbps": e.acknowledgedBitrate.map { "\($0 / 1000)" } ?? "-",
            "cc.lossLimitKbps": e.lossLimitBitrate.map { "\($0 / 1000)" } ?? "-",
            "cc.remb": e.rembBitrate.map { "\($0 / 1000)" } ?? "-",
            "cc.loss": e.lossFraction.map { String(format: "%.3f", $0) } ?? "-",
            "cc.rttMs": e.rttMs.map { String(format: "%.1f", $0) } ?? "-",
            "cc.inputs": e.inputs.joined(separator: ","), "cc.report": e.reportAction ?? "-",
            "cc.sentKbps": "\(e.sentBitrate / 1000)", "cc.repairKbps": "\(c.repairBitrate / 1000)",
            "cc.overheadKbps": "\(c.overheadBitrate / 1000)",
            "cc.rtxRefused": "\(c.pacer.counters.retransmissionsRefused)",
            "cc.rtxWaited": "\(c.pacer.counters.retransmissionsWaited)",
            "cc.rtxExpired": "\(c.pacer.counters.retransmissionsExpired)",
            "cc.feedback": "\(e.feedbackMessages)", "cc.reported": "\(e.packetsLostReported)/\(e.packetsReported)",
            "cc.rtxSent": "\(c.rtxSent)", "cc.nacks": "\(c.nacksReceived)",
            "cc.queueMs": String(format: "%.1f", c.pacedQueueMillis), "cc.refused": "\(c.pacer.counters.refused)",
            "cc.sendFailures": "\(c.pacer.sendFailures)",
            "cc.probeKbps": e.probeBitrate.map { "\($0 / 1000)" } ?? "-",
            "cc.paddingBytes": "\(c.pacer.counters.paddingBytes)"
        ]
    }

    func statistics(medias: [TransceiverMedia], nowMicros: Int64) -> CongestionStatistics {
        let estimate = estimator.withLock { $0.snapshot(nowMicros: nowMicros) }
        let pacing = pacer.snapshot()
        let senders = medias.flatMap(\.senders)
        return CongestionStatistics(
            targetBitrate: estimate.targetBitrate, limitedBy: estimate.limitedBy, estimate: estimate,
            rtxSent: senders.reduce(0) { $0 + $1.counters.rtxPacketsSent },
            nacksReceived: senders.reduce(0) { $0 + $1.counters.nacksReceived },
            pacedQueueMillis: pacing.queueDelayMillis, pacer: pacing,
            repairBitrate: Int(repair.withLock { $0.bitsPerSecond }),
            overheadBitrate: Int(overhead.withLock { $0.bitsPerSecond }))
    }
}

/// A peer connection's congestion-control figures (`PeerConnectionStatistics.congestion`).
public struct CongestionStatistics: Sendable, Equatable {
    /// What all streams together may send (bits per second), and why it is not more.
    public var targetBitrate: Int
    public var limitedBy: LimitReason
    /// The parts: delay-based rate and state, loss limit and fraction, REMB, acknowledged rate, RTT.
    public var estimate: BandwidthEstimator.Snapshot
    /// Retransmissions sent on RTX (or as themselves) and NACK messages answered, all streams.
    public var rtxSent: Int
    public var nacksReceived: Int
    /// How long the oldest packet in the pacer has waited.
    public var pacedQueueMillis: Double
    public var pacer: PacedSender.Snapshot
    /// Retransmissions' share of the link (smoothed), taken off the encoders' targets.
    public var repairBitrate: Int
    /// The video packets' headers on the wire (smoothed), taken off the encoders' targets too.
    public var overheadBitrate: Int
}
