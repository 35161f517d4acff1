import RTPWire

/// Why the send rate is what it is, for the status line.
public enum LimitReason: String, Sendable, Equatable {
    /// The target is the configured maximum.
    case none
    /// The link's estimate holds the target under the maximum.
    case bandwidth
    /// The encoder cannot keep up (reported by the encoder side).
    case cpu
}

/// A send-side bandwidth estimate for one transport, in the manner of Google Congestion Control
/// (draft-ietf-rmcat-gcc-02): transport-wide feedback gives per-packet send and arrival times;
/// the delay-based detector and AIMD controller follow the queue at the bottleneck, the loss-based
/// control caps the rate under heavy loss, a receiver's REMB caps it when one is sent, and the
/// target is the least of them within [minimum, maximum].
///
/// Without transport-wide feedback (a receiver that did not negotiate it, or feedback that stopped
/// for `feedbackLapseMicros`) the estimate is `ReportBasedEstimate`: receiver reports' loss and
/// round trip, and a REMB only where it is below what we send.
///
/// The start bitrate is 300 kbit/s, as libwebrtc starts: under nearly every uplink, so the first
/// seconds do not flood a slow one with loss and retransmissions. With feedback the start phase
/// is probed once the start's burst (the first keyframe, paced above the start rate) has crossed
/// the bottleneck: the first feedback whose newest packet was sent after the burst (the last
/// moment 100 ms of sending ran over 1.5 × the start rate) and arrived with no more queueing delay
/// than the least seen (within `drainedDelayMicros`), or `drainWaitMicros` after the first
/// feedback on a link that never drains (`StartupProbes`: two 60 ms clusters at 3 × and 6 × the start, more
/// past them while they are delivered). A probe on top of a keyframe still queued at a slow
/// bottleneck overflows it, and the keyframe's lost packets cost a retransmission or a second
/// keyframe before the first frame shows; and the estimate takes what the probes show
/// delivered; from there it ramps 50 % a second until the first overuse. Without feedback it is
/// `ReportBasedEstimate`'s, which probes with padding while the sender is application-limited.
///
/// A value: every input carries `nowMicros`; no clock is read.
public struct BandwidthEstimator: Sendable {
    public struct Configuration: Sendable {
        public var minimumBitrate = 100_000
        public var startBitrate = 300_000
        public var maximumBitrate = 2_540_000
        /// A REMB not repeated within this long stops capping.
        public var rembLifetimeMicros: Int64 = 10_000_000
        /// Transport-wide feedback not heard for this long no longer sets the rate.
        public var feedbackLapseMicros: Int64 = 2_000_000
        /// The start's burst has crossed once a packet arrives this close to the least delay seen.
        public var drainedDelayMicros: Int64 = 10_000
        /// Probing starts this long after the first feedback even if no packet arrived that early.
        public var drainWaitMicros: Int64 = 1_000_000
        public init() {}
    }

    /// What the estimate is made of, for statistics.
    public struct Snapshot: Sendable, Equatable {
        public var targetBitrate: Int
        public var limitedBy: LimitReason
        public var delayBasedBitrate: Int
        public var lossLimitBitrate: Int?
        public var rembBitrate: Int?
        public var acknowledgedBitrate: Int?
        public var delayState: String
        public var rateControlPhase: String
        public var trendMs: Double
        public var thresholdMs: Double
        public var lossFraction: Double?
        /// Without transport-wide feedback: what the path loses whatever is sent, as the
        /// report-based estimate has learned it (`ReportBasedEstimate.pathLoss`).
        public var pathLoss: Double?
        public var rttMs: Double?
        public var feedbackMessages: Int
        public var packetsReported: Int
        public var packetsLostReported: Int
        /// What moves the estimate now: "twcc", "remb", "loss" (receiver reports).
        public var inputs: [String]
        /// The estimate's last step: without transport-wide feedback the report-based estimate's;
        /// with it, the start-up probes' ("probe 1800 kbit/s delivered 1425").
        public var reportAction: String?
        /// What left over the last second, every stream and retransmission.
        public var sentBitrate: Int
        /// The rate a bandwidth probe tops the link up to with padding now (without
        /// transport-wide feedback, while the sender is application-limited).
        public var probeBitrate: Int?
    }

    public private(set) var configuration: Configuration
    private var adapter = TransportFeedbackAdapter()
    private var acknowledged = AcknowledgedBitrate()
    private var detector = DelayBasedDetector()
    private var rateControl: AIMDRateControl
    private var loss = LossBasedControl()
    private var remb: (bitrate: Int, atMicros: Int64)?
    private var reports: ReportBasedEstimate
    private var startup = StartupProbes()
    private var sent = SentRate()
    private var lastFeedbackMicros: Int64?
    /// The start's burst: the least arrival-minus-send offset seen, the first feedback, and
    /// whether the queue it made has drained (probing may start).
    private var leastOffsetMicros: Int64?
    private var firstFeedbackMicros: Int64?
    private var startDrained = false
    /// Until then, the last 100 ms of packets sent, and the last moment they ran over 1.5 × the
    /// start rate (the burst).
    private var recentSends: [(micros: Int64, size: Int)] = []
    private var recentBytes = 0
    private var burstSeenMicros: Int64?
    private var lastOveruseMicros: Int64?
    private var lastReportMicros: Int64?
    private var lastReportFraction: Double?
    private var rttMicros: Int64?
    private var limitedByCPU = false
    private var feedbackMessages = 0
    private var packetsReported = 0
    private var packetsLostReported = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        rateControl = AIMDRateControl(startBitrate: configuration.startBitrate)
        reports = ReportBasedEstimate(startBitrate: configuration.startBitrate)
    }

    public var bounds: ClosedRange<Int> {
        configuration.minimumBitrate...max(configuration.minimumBitrate, configuration.maximumBitrate)
    }

    /// The most the senders can use (the encoders' configured bitrates and the audio).
    public mutating func setMaximumBitrate(_ bitsPerSecond: Int) {
        configuration.maximumBitrate = max(configuration.minimumBitrate, bitsPerSecond)
    }

    /// The encoders say whether the target holds them under their best size or frame rate (a
    /// probe for a higher estimate is worth its padding only then).
    public mutating func setEncodersWantMore(_ wantMore: Bool) { reports.encodersWantMore = wantMore }

    /// The encoder side says whether it is what holds the rate down.
    public mutating func setLimitedByCPU(_ limited: Bool) { limitedByCPU = limited }

    /// Every packet as it leaves; `sequence` is its transport-wide number when it has one,
    /// `probeCluster` the probe cluster it is part of.
    public mutating func packetSent(sequence: UInt16?, size: Int, probeCluster: Int? = nil, nowMicros: Int64) {
        if let sequence {
            let unwrapped = adapter.packetSent(sequence: sequence, size: size, nowMicros: nowMicros)
            if let probeCluster {
                startup.packetSent(cluster: probeCluster, sequence: unwrapped, size: size, nowMicros: nowMicros)
            }
        }
        sent.add(bytes: size, nowMicros: nowMicros)
        if !startDrained {
            recentSends.append((nowMicros, size))
            recentBytes += size
            while let first = recentSends.first, first.micros <= nowMicros - 100_000 {
                recentBytes -= first.size
                recentSends.removeFirst()
            }
            if recentBytes * 8 * 10 > configuration.startBitrate * 3 / 2 { burstSeenMicros = nowMicros }
        }
    }

    /// Probe clusters for the pacer to send now (each handed out once): the start-up probes, once
    /// transport-wide feedback arrives.
    public mutating func takeProbeClusters(nowMicros: Int64) -> [ProbeCluster] {
        startup.tick(nowMicros: nowMicros, maximum: bounds.upperBound)
        guard hasFeedback(nowMicros: nowMicros) else { return [] }
        return startup.take(nowMicros: nowMicros)
    }

    /// Transport-wide feedback arrives and has not lapsed.
    public func hasFeedback(nowMicros: Int64) -> Bool {
        guard let last = lastFeedbackMicros else { return false }
        return nowMicros - last <= configuration.feedbackLapseMicros
    }

    public mutating func transportFeedback(_ message: TransportWideFeedback, nowMicros: Int64) {
        let packets = adapter.feedback(message)
        feedbackMessages += 1
        lastFeedbackMicros = nowMicros
        guard !packets.isEmpty else { return }
        let lost = packets.reduce(0) { $0 + ($1.arrivalMicros == nil ? 1 : 0) }
        packetsReported += packets.count
        packetsLostReported += lost
        acknowledged.add(packets)
        let usage = detector.update(packets)
        if usage == .overusing { lastOveruseMicros = nowMicros }
        let rtt = rttMicros ?? 100_000
        rateControl.update(
            usage: usage, acknowledged: acknowledged.bitsPerSecond, sent: acknowledged.sentBitsPerSecond,
            rttMicros: rtt, bounds: bounds, nowMicros: nowMicros)
        if startDrained(packets, nowMicros: nowMicros) {
            startup.begin(estimate: rateControl.estimate, maximum: bounds.upperBound)
        }
        if let delivered = startup.feedback(packets, maximum: bounds.upperBound, nowMicros: nowMicros),
            usage != .overusing, delivered.bitrate > rateControl.estimate || delivered.atCapacity
        {
            rateControl.setEstimate(
                delivered.bitrate, atCapacity: delivered.atCapacity, bounds: bounds, nowMicros: nowMicros)
        }
        // A queue within the last two seconds: loss now may be ours (the bottleneck's drops).
        let queueing = lastOveruseMicros.map { nowMicros - $0 <= 2_000_000 } ?? false
        loss.report(
            lost: lost, total: packets.count, current: rateControl.estimate, rttMicros: rtt, queueing: queueing,
            nowMicros: nowMicros)
        reports.follow(targetBitrate(nowMicros: nowMicros))
    }

    /// Whether the queue the start's burst made at the bottleneck has drained (then it stays so).
    private mutating func startDrained(_ packets: [PacketFeedback], nowMicros: Int64) -> Bool {
        guard !startDrained else { return true }
        let first = firstFeedbackMicros ?? nowMicros
        firstFeedbackMicros = first
        for packet in packets {
            guard let arrival = packet.arrivalMicros else { continue }
            leastOffsetMicros = min(leastOffsetMicros ?? .max, arrival - packet.sendMicros)
        }
        if let newest = packets.last(where: { $0.arrivalMicros != nil }), let arrival = newest.arrivalMicros,
            newest.sendMicros > burstSeenMicros ?? .min,
            let least = leastOffsetMicros, arrival - newest.sendMicros - least <= configuration.drainedDelayMicros
        {
            startDrained = true
        }
        if nowMicros - first >= configuration.drainWaitMicros { startDrained = true }
        if startDrained { recentSends = [] }
        return startDrained
    }

    public mutating func receiverEstimatedMaximum(_ bitsPerSecond: Int, nowMicros: Int64) {
        remb = (bitsPerSecond, nowMicros)
    }

    /// A receiver report's fraction lost (the worst of its blocks). Moves the estimate only while
    /// no transport-wide feedback arrives, which counts loss itself, per packet.
    public mutating func receiverReport(fractionLost: Double, nowMicros: Int64) {
        lastReportMicros = nowMicros
        lastReportFraction = fractionLost
        guard !hasFeedback(nowMicros: nowMicros) else { return }
        reports.receiverEstimate(currentREMB(nowMicros: nowMicros))
        reports.report(
            fractionLost: fractionLost, rttMicros: rttMicros, sentBitrate: sent.bitsPerSecond(nowMicros: nowMicros),
            bounds: bounds, nowMicros: nowMicros)
    }

    /// A receiver's NACKs (each packet as its stream's SSRC and sequence number, one key): without
    /// transport-wide feedback they stop a probe that makes the link drop packets at once
    /// (`ReportBasedEstimate.nacked`). True when they stopped one (the padding is to end).
    @discardableResult
    public mutating func nacked(_ packets: [Int64], nowMicros: Int64) -> Bool {
        guard !hasFeedback(nowMicros: nowMicros) else { return false }
        return reports.nacked(packets, nowMicros: nowMicros)
    }

    public mutating func roundTrip(milliseconds: Double) { rttMicros = Int64(milliseconds * 1000) }

    private func currentREMB(nowMicros: Int64) -> Int? {
        guard let remb, nowMicros - remb.atMicros <= configuration.rembLifetimeMicros else { return nil }
        return remb.bitrate
    }

    /// Repairs over the budget wait for it: without transport-wide feedback, while a probe runs
    /// or just failed (`ReportBasedEstimate.repairsMayWait`).
    public func repairsMayWait(nowMicros: Int64) -> Bool {
        !hasFeedback(nowMicros: nowMicros) && reports.repairsMayWait(nowMicros: nowMicros)
    }

    /// The rate the pacer tops the link up to with padding now: a probe of the report-based
    /// estimate's (`ReportBasedEstimate`), never while transport-wide feedback sets the rate.
    public func probeBitrate(nowMicros: Int64) -> Int? {
        hasFeedback(nowMicros: nowMicros) ? nil : reports.probeBitrate(nowMicros: nowMicros)
    }

    public func targetBitrate(nowMicros: Int64) -> Int {
        let remb = currentREMB(nowMicros: nowMicros)
        var target: Int
        if hasFeedback(nowMicros: nowMicros) {
            target = rateControl.estimate
            if let limit = loss.limit { target = min(target, limit) }
            if let remb { target = min(target, remb) }
        } else {
            // Without transport-wide feedback REMB and loss are already inside the estimate.
            target = reports.estimate
        }
        return min(max(target, bounds.lowerBound), bounds.upperBound)
    }

    /// What holds the rate down: the CPU (the encoder side says so), the link (the target is
    /// under the maximum and the senders use it), or nothing — which includes an application-limited
    /// sender (it sends under half of the target: a still or cheap screen, whose rate is the
    /// content's, not the link's).
    public func limitedBy(nowMicros: Int64) -> LimitReason {
        if limitedByCPU { return .cpu }
        let target = targetBitrate(nowMicros: nowMicros)
        guard target < bounds.upperBound else { return .none }
        var sent = self.sent
        return sent.bitsPerSecond(nowMicros: nowMicros) * 2 < target ? .none : .bandwidth
    }

    public func snapshot(nowMicros: Int64) -> Snapshot {
        let twcc = hasFeedback(nowMicros: nowMicros)
        var inputs: [String] = []
        if twcc { inputs.append("twcc") }
        if currentREMB(nowMicros: nowMicros) != nil { inputs.append("remb") }
        if !twcc, let last = lastReportMicros, nowMicros - last <= 5_000_000 { inputs.append("loss") }
        var sent = self.sent
        return Snapshot(
            targetBitrate: targetBitrate(nowMicros: nowMicros), limitedBy: limitedBy(nowMicros: nowMicros),
            delayBasedBitrate: rateControl.estimate, lossLimitBitrate: loss.limit,
            rembBitrate: currentREMB(nowMicros: nowMicros), acknowledgedBitrate: acknowledged.bitsPerSecond,
            delayState: detector.state.rawValue, rateControlPhase: rateControl.phase.rawValue,
            trendMs: detector.trend, thresholdMs: detector.thresholdMs,
            lossFraction: twcc ? loss.lastFraction : lastReportFraction,
            pathLoss: twcc ? nil : reports.pathLoss,
            rttMs: rttMicros.map { Double($0) / 1000 }, feedbackMessages: feedbackMessages,
            packetsReported: packetsReported, packetsLostReported: packetsLostReported, inputs: inputs,
            reportAction: twcc ? startup.lastAction : reports.lastAction,
            sentBitrate: sent.bitsPerSecond(nowMicros: nowMicros),
            probeBitrate: probeBitrate(nowMicros: nowMicros))
    }
}
