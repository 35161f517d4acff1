/// Start-up probing with transport-wide feedback, in the manner of libwebrtc's `ProbeController`
/// and `ProbeBitrateEstimator`: the estimate starts at 300 kbit/s, and as soon as feedback shows it
/// arrives, two short clusters go out at 3 × and 6 × that rate (60 ms each: a few kilobytes, which
/// a shallow bottleneck queue holds). What the feedback shows of a cluster is its delivered rate:
///
/// - the send rate is its bytes (less the last packet's) over the time its packets took to leave;
///   the receive rate that of its second half's arrivals (a shaper's bucket lets the first
///   kilobytes through at the line's rate);
/// - the result is the lesser of the two; where the link took the cluster more slowly than it was
///   sent (receive under 0.9 × send: the probe found the bottleneck), 0.95 × the receive rate;
/// - a cluster of which under 80 % of the packets arrived, of under 5 packets, or that arrived more
///   than twice as fast as it left (measurement noise), shows nothing.
///
/// A result above the estimate becomes the estimate at once (`BandwidthEstimator`), and so does one
/// that found the bottleneck, even under an earlier cluster's (which a shaper's bucket passed whole
/// and so overstated). When the last
/// cluster was delivered whole (it reached 70 % of its rate and no cluster found the bottleneck),
/// the link is probed again at twice the result, until the maximum. Probing ends once a cluster
/// finds the bottleneck or falls under 70 %, at the maximum, or after `maximumClusters`. A round of
/// which no cluster showed anything (too many of its packets, or the feedback on them, lost: two
/// clusters of 6 and 11 packets on a link that loses 5–10 % in each direction) says nothing of the
/// link, and is sent once more (`retries`): ending there left the estimate at the start while the
/// sender, held under it by its layers, could not show the link more (a simulcast share over Janus
/// on 5 % loss kept its top layer off for 16 s). A cluster with no result within
/// `resultTimeoutMicros` shows nothing. (Probing past a cluster that found the
/// bottleneck, as libwebrtc's 70 % rule alone would, only fills the link's queue: the delay-based
/// detector then sees overuse and takes the estimate down again.) Only the start is probed:
/// later the delay-based control climbs from a known capacity.
///
/// A value: every input carries `nowMicros`.
public struct StartupProbes: Sendable {
    public struct Configuration: Sendable {
        public var factors = [3.0, 6.0]
        /// How long a cluster lasts at its rate (its size: this long at the rate).
        public var clusterMicros: Int64 = 60_000
        public var minimumPackets = 5
        public var minimumReceivedFraction = 0.8
        /// A result that reached this fraction of its cluster's rate is probed past again.
        public var continueFraction = 0.7
        public var maximumClusters = 6
        public var resultTimeoutMicros: Int64 = 1_000_000
        /// How many times a round whose clusters all showed nothing is sent again.
        public var retries = 1
        public init() {}
    }

    public enum State: String, Sendable { case waiting, probing, done }

    struct Record {
        var cluster: ProbeCluster
        var sent: [(sequence: Int64, size: Int, sendMicros: Int64)] = []
        var takenMicros: Int64
        var lastSendMicros: Int64?
        var reported: [Int64: (size: Int, sendMicros: Int64, arrivalMicros: Int64?)] = [:]
    }

    public let configuration: Configuration
    public private(set) var state = State.waiting
    /// The last result, bits per second.
    public private(set) var lastResult: Int?
    /// The last step, for the statistics ("probe 900 kbit/s delivered 880", …).
    public private(set) var lastAction: String?
    /// Why probing ended.
    public private(set) var endReason: String?
    private var planned: [ProbeCluster] = []
    /// A cluster the link took more slowly than it was sent: no probe past it.
    private var linkFound = false
    private var records: [Int: Record] = [:]
    private var nextID = 1
    private var clustersSent = 0
    /// The estimate probing began at (a round sent again starts from it), whether any cluster has
    /// shown a rate, and how many rounds were sent again.
    private var beginEstimate = 0
    private var measuredAny = false
    private var retried = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Feedback arrives for the first time: plans the first clusters (once).
    public mutating func begin(estimate: Int, maximum: Int) {
        guard state == .waiting else { return }
        state = .probing
        beginEstimate = estimate
        planRound(maximum: maximum)
        if planned.isEmpty { finish("the estimate starts at the maximum") }
    }

    private mutating func planRound(maximum: Int) {
        for factor in configuration.factors { plan(bitrate: Int(Double(beginEstimate) * factor), maximum: maximum) }
    }

    /// Every cluster of the round is done: a round that showed nothing is sent again while
    /// retries and the cluster limit allow; otherwise probing ends.
    private mutating func roundEnded(_ why: String, maximum: Int) {
        if !measuredAny, retried < configuration.retries {
            retried += 1
            planRound(maximum: maximum)
            if !planned.isEmpty {
                lastAction = (lastAction.map { $0 + "; " } ?? "") + "probing again"
                return
            }
        }
        finish(why)
    }

    private mutating func plan(bitrate wanted: Int, maximum: Int) {
        guard clustersSent + planned.count < configuration.maximumClusters else { return }
        let bitrate = min(wanted, maximum)
        guard planned.last.map({ bitrate > $0.bitrate }) ?? true else { return }
        let bytes = max(
            Int(Int64(bitrate) * configuration.clusterMicros / 8_000_000), configuration.minimumPackets * 250)
        planned.append(ProbeCluster(id: nextID, bitrate: bitrate, bytes: bytes))
        nextID += 1
    }

    /// The clusters to send now (each handed out once).
    public mutating func take(nowMicros: Int64) -> [ProbeCluster] {
        defer { planned.removeAll() }
        for cluster in planned { records[cluster.id] = Record(cluster: cluster, takenMicros: nowMicros) }
        clustersSent += planned.count
        return planned
    }

    /// A packet of cluster `cluster` left (its transport-wide number unwrapped).
    public mutating func packetSent(cluster: Int, sequence: Int64, size: Int, nowMicros: Int64) {
        guard records[cluster] != nil else { return }
        records[cluster]!.sent.append((sequence, size, nowMicros))
        records[cluster]!.lastSendMicros = nowMicros
    }

    /// Transport-wide feedback: the clusters it completes are measured. Returns the best result
    /// this feedback brought, to raise the estimate with, and whether a cluster found the
    /// bottleneck (then the result is the link's capacity).
    public mutating func feedback(_ packets: [PacketFeedback], maximum: Int, nowMicros: Int64) -> (
        bitrate: Int, atCapacity: Bool
    )? {
        guard state == .probing, !records.isEmpty else { return nil }
        var best: (bitrate: Int, atCapacity: Bool)?
        let newest = packets.map(\.sequence).max()
        for id in records.keys.sorted() {
            guard var record = records[id], let first = record.sent.first?.sequence,
                let last = record.sent.last?.sequence
            else { continue }
            for packet in packets where (first...last).contains(packet.sequence) {
                record.reported[packet.sequence] = (packet.size, packet.sendMicros, packet.arrivalMicros)
            }
            records[id] = record
            // Complete once feedback reaches past the cluster's last packet (later clusters and
            // media follow it), or timed out.
            let complete = newest.map { $0 > last } ?? false
            let timedOut = nowMicros - (record.lastSendMicros ?? nowMicros) > configuration.resultTimeoutMicros
            guard complete || timedOut else { continue }
            records[id] = nil
            let (result, saturated): (Int, Bool)
            switch Self.measurement(record, configuration: configuration) {
            case .nothing(let why):
                lastAction = "probe \(record.cluster.bitrate / 1000) kbit/s showed nothing (\(why))"
                continue
            case .delivered(let bitrate, let found): (result, saturated) = (bitrate, found)
            }
            measuredAny = true
            lastResult = result
            lastAction = "probe \(record.cluster.bitrate / 1000) kbit/s delivered \(result / 1000)"
            if result > best?.bitrate ?? 0 { best = (result, saturated) }
            if saturated { linkFound = true }
            let reachedCluster = Double(result) >= configuration.continueFraction * Double(record.cluster.bitrate)
            if records.isEmpty, planned.isEmpty {
                if reachedCluster, !linkFound, record.cluster.bitrate < maximum {
                    plan(bitrate: 2 * result, maximum: maximum)
                }
                if planned.isEmpty {
                    finish(linkFound || !reachedCluster ? "the link is found" : "the maximum or the cluster limit")
                }
            }
        }
        if records.isEmpty, planned.isEmpty, state == .probing {
            roundEnded("no cluster showed the link", maximum: maximum)
        }
        return best
    }

    /// Clusters with no result `resultTimeoutMicros` after their last packet left (or after they
    /// were handed out, when none did) are given up; with none left, the round has ended.
    public mutating func tick(nowMicros: Int64, maximum: Int) {
        guard state == .probing, planned.isEmpty, !records.isEmpty else { return }
        records = records.filter {
            nowMicros - ($0.value.lastSendMicros ?? $0.value.takenMicros) <= configuration.resultTimeoutMicros
        }
        if records.isEmpty {
            if !measuredAny { lastAction = "no probe result within \(configuration.resultTimeoutMicros / 1000) ms" }
            roundEnded("no result within \(configuration.resultTimeoutMicros / 1000) ms", maximum: maximum)
        }
    }

    private mutating func finish(_ why: String) {
        state = .done
        endReason = why
    }

    /// What a cluster's feedback shows.
    enum Measurement: Equatable {
        /// The delivered rate, and whether the link took the cluster more slowly than it was sent
        /// (`saturated`: the probe found the bottleneck).
        case delivered(bitrate: Int, saturated: Bool)
        /// Nothing, and why (for the statistics).
        case nothing(String)
    }

    /// The delivered rate a cluster's feedback shows, or nil when it shows nothing.
    static func measure(_ record: Record, configuration: Configuration) -> Int? {
        guard case .delivered(let bitrate, _) = measurement(record, configuration: configuration) else { return nil }
        return bitrate
    }

    static func measurement(_ record: Record, configuration: Configuration) -> Measurement {
        let sent = record.sent.sorted { $0.sendMicros < $1.sendMicros }
        guard sent.count >= configuration.minimumPackets, let firstSend = sent.first, let lastSend = sent.last
        else { return .nothing("\(sent.count) packets sent") }
        let arrived = record.reported.values.compactMap { r in r.arrivalMicros.map { (at: $0, size: r.size) } }
            .sorted { $0.at < $1.at }
        guard arrived.count >= configuration.minimumPackets,
            Double(arrived.count) >= configuration.minimumReceivedFraction * Double(sent.count),
            let lastArrival = arrived.last
        else { return .nothing("\(arrived.count) of \(sent.count) packets reported arrived") }
        // The receive rate over the cluster's second half: a shaper with a bucket (`tc tbf`
        // burst) lets the first few kilobytes through at the line's rate, and only what comes
        // after them shows the rate it drains at.
        let from = arrived.count >= 2 * configuration.minimumPackets ? arrived.count / 2 : 0
        let sendSpan = lastSend.sendMicros - firstSend.sendMicros
        let receiveSpan = lastArrival.at - arrived[from].at
        guard sendSpan > 0, receiveSpan > 0, sendSpan <= 1_000_000, receiveSpan <= 1_000_000 else {
            return .nothing("sent over \(sendSpan) µs, received over \(receiveSpan) µs")
        }
        let sentBytes = sent.reduce(0) { $0 + $1.size } - lastSend.size
        let receivedBytes = arrived[(from + 1)...].reduce(0) { $0 + $1.size }
        let sendRate = Double(sentBytes) * 8_000_000 / Double(sendSpan)
        let receiveRate = Double(receivedBytes) * 8_000_000 / Double(receiveSpan)
        guard receiveRate <= 2 * sendRate else {
            return .nothing("received at \(Int(receiveRate / 1000)) kbit/s, over twice its send rate")
        }
        if receiveRate < 0.9 * sendRate { return .delivered(bitrate: Int(0.95 * receiveRate), saturated: true) }
        return .delivered(bitrate: Int(min(sendRate, receiveRate)), saturated: false)
    }
}
