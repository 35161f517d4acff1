import RTPWire
import TestSupport
@testable import VideoSend

/// A simulation, not a network: a bottleneck modelled as a FIFO queue drained at `capacity` bits
/// per second, a fixed one-way propagation delay, tail drop once the queue holds more than
/// `queueLimitMicros` of data (as a `tc tbf` with a latency limit does), and optional random loss
/// from a seeded generator. Times are microseconds on the test's manual clock.
struct SimulatedLink {
    var capacity: Int
    var propagationMicros: Int64 = 20_000
    var queueLimitMicros: Int64 = 200_000
    var randomLoss = 0.0
    var generator = SplitMix64(seed: 7)
    /// A token bucket in front of the queue (`tc tbf` burst): an idle link lets this many bytes
    /// through at once, at the line's rate, before the queue drains at `capacity`.
    var bucketBytes = 0
    private(set) var busyUntilMicros: Int64 = 0
    private(set) var tailDrops = 0
    private var tokens = 0.0
    private var tokensMicros: Int64 = 0

    init(capacity: Int) { self.capacity = capacity }

    /// The arrival time of a packet of `size` bytes sent at `nowMicros`, or nil when it is lost.
    mutating func send(size: Int, nowMicros: Int64) -> Int64? {
        if randomLoss > 0, Double(generator.next() % 1_000_000) / 1_000_000 < randomLoss { return nil }
        if bucketBytes > 0 {
            if busyUntilMicros <= nowMicros {
                let earned = Double(capacity) * Double(nowMicros - max(tokensMicros, busyUntilMicros)) / 8_000_000
                tokens = min(Double(bucketBytes), tokens + earned)
            }
            tokensMicros = nowMicros
            if busyUntilMicros <= nowMicros, tokens >= Double(size) {
                tokens -= Double(size)
                return nowMicros + propagationMicros
            }
            tokens = 0
        }
        let start = max(nowMicros, busyUntilMicros)
        if start - nowMicros > queueLimitMicros {
            tailDrops += 1
            return nil
        }
        busyUntilMicros = start + Int64(size) * 8 * 1_000_000 / Int64(capacity)
        return busyUntilMicros + propagationMicros
    }

    func queueDelayMicros(nowMicros: Int64) -> Int64 { max(0, busyUntilMicros - nowMicros) }
}

/// A sender that always has data (it sends exactly its target, in packets of up to 1200 bytes
/// every 5 ms) through a `SimulatedLink`, and a receiver that sends transport-wide feedback every
/// 50 ms, which reaches the estimator one propagation delay later.
struct LinkSimulation {
    var estimator: BandwidthEstimator
    var link: SimulatedLink
    var nowMicros: Int64 = 0
    /// Target samples, one per 100 ms: (time in seconds, bits per second).
    private(set) var targets: [(seconds: Double, bitrate: Int)] = []
    private(set) var maxQueueMicros: [Int64] = []
    private var sequence: UInt16 = 0
    private var credit = 0.0
    private var pending: [(sequence: UInt16, arrival: Int64?, sentMicros: Int64)] = []
    private var feedbackCount: UInt8 = 0
    /// Feedback messages built, waiting for their delivery time.
    private var inFlight: [(deliverMicros: Int64, message: TransportWideFeedback)] = []
    /// When the sender sends less than its target (an application-limited source): at most this.
    var sourceLimit: Int?
    /// Keyframe-like bursts on top: every `everyMicros`, `bytes` more, paced at 2.5 × the target.
    var burst: (everyMicros: Int64, bytes: Int)?
    private var burstBacklog = 0.0
    /// Sends the estimate's probe clusters (`takeProbeClusters`) as the pacer would: at the
    /// cluster's rate, in 1200-byte packets tagged with its id, until its bytes have left.
    var sendsProbeClusters = false
    private var clusters: [ProbeCluster] = []
    private var clusterLeft = 0
    private var clusterCredit = 0.0
    /// When the first probe cluster was taken; the packets sent while the first burst was paced
    /// out, their latest arrival and how many of them the link dropped.
    private(set) var firstProbeMicros: Int64?
    private(set) var firstBurst = (packets: 0, dropped: 0, arrivedMicros: Int64(0))

    init(estimator: BandwidthEstimator = BandwidthEstimator(), capacity: Int) {
        self.estimator = estimator
        link = SimulatedLink(capacity: capacity)
    }

    mutating func run(seconds: Double) {
        let end = nowMicros + Int64(seconds * 1_000_000)
        while nowMicros < end {
            step()
            nowMicros += 5_000
        }
    }

    private mutating func step() {
        // Deliver feedback due now.
        while let first = inFlight.first, first.deliverMicros <= nowMicros {
            inFlight.removeFirst()
            estimator.transportFeedback(first.message, nowMicros: nowMicros)
        }
        let target = estimator.targetBitrate(nowMicros: nowMicros)
        let rate = min(target, sourceLimit ?? .max)
        credit += Double(rate) * 0.005 / 8
        var inFirstBurst = false
        if let burst {
            if nowMicros % burst.everyMicros == 0 { burstBacklog += Double(burst.bytes) }
            let paced = min(burstBacklog, 2.5 * Double(target) * 0.005 / 8)
            burstBacklog -= paced
            credit += paced
            inFirstBurst = paced > 0 && nowMicros < burst.everyMicros
        }
        if sendsProbeClusters {
            let taken = estimator.takeProbeClusters(nowMicros: nowMicros)
            if firstProbeMicros == nil, !taken.isEmpty { firstProbeMicros = nowMicros }
            if clusters.isEmpty, let first = taken.first { clusterLeft = first.bytes }
            clusters += taken
        }
        if let cluster = clusters.first {
            clusterCredit += Double(cluster.bitrate) * 0.005 / 8
            credit = max(credit, clusterCredit)
        }
        while credit >= 1200 {
            credit -= 1200
            let cluster = clusters.first
            if cluster != nil {
                clusterCredit -= 1200
                clusterLeft -= 1200
                if clusterLeft <= 0 {
                    clusters.removeFirst()
                    clusterLeft = clusters.first?.bytes ?? 0
                    clusterCredit = 0
                }
            }
            estimator.packetSent(sequence: sequence, size: 1200, probeCluster: cluster?.id, nowMicros: nowMicros)
            let arrival = link.send(size: 1200, nowMicros: nowMicros)
            if inFirstBurst, cluster == nil {
                firstBurst.packets += 1
                if let arrival {
                    firstBurst.arrivedMicros = max(firstBurst.arrivedMicros, arrival)
                } else {
                    firstBurst.dropped += 1
                }
            }
            pending.append((sequence, arrival, nowMicros))
            sequence &+= 1
        }
        if nowMicros % 50_000 == 0 { sendFeedback() }
        if nowMicros % 100_000 == 0 {
            targets.append((Double(nowMicros) / 1_000_000, estimator.targetBitrate(nowMicros: nowMicros)))
            maxQueueMicros.append(link.queueDelayMicros(nowMicros: nowMicros))
            estimator.roundTrip(
                milliseconds: Double(2 * link.propagationMicros + link.queueDelayMicros(nowMicros: nowMicros)) / 1000)
        }
    }

    /// The receiver reports every packet that arrived by now, and the lost ones before them.
    private mutating func sendFeedback() {
        guard let lastArrived = pending.lastIndex(where: { ($0.arrival ?? .max) <= nowMicros }) else { return }
        let reported = pending[...lastArrived]
        let arrivals = reported.compactMap { p in
            p.arrival.map { (sequenceNumber: p.sequence, arrivalTime: Duration.microseconds($0)) }
        }
        pending.removeFirst(lastArrived + 1)
        guard !arrivals.isEmpty,
            var message = try? TransportWideFeedback(
                senderSSRC: 1, mediaSSRC: 2, feedbackPacketCount: feedbackCount,
                arrivals: arrivals)
        else { return }
        // Lost packets ahead of the first arrival are reported too.
        if let firstReported = reported.first?.sequence, firstReported != message.baseSequenceNumber {
            let missing = Int(message.baseSequenceNumber &- firstReported)
            message = TransportWideFeedback(
                senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: firstReported,
                referenceTime: message.referenceTime, feedbackPacketCount: feedbackCount,
                statuses: Array(repeating: .notReceived, count: missing) + message.statuses)
        }
        feedbackCount &+= 1
        inFlight.append((nowMicros + link.propagationMicros, message))
    }

    /// The mean target over the last `seconds`.
    func meanTarget(lastSeconds seconds: Double) -> Double {
        let from = Double(nowMicros) / 1_000_000 - seconds
        let tail = targets.filter { $0.seconds >= from }
        return tail.isEmpty ? 0 : Double(tail.reduce(0) { $0 + $1.bitrate }) / Double(tail.count)
    }

    func maxQueueMillis(lastSeconds seconds: Double) -> Double {
        let count = Int(seconds * 10)
        return Double(maxQueueMicros.suffix(count).max() ?? 0) / 1000
    }

    /// The first time (seconds) the target reached `bitrate`, if it did.
    func firstTime(reaching bitrate: Int, after start: Double = 0) -> Double? {
        targets.first { $0.seconds >= start && $0.bitrate >= bitrate }?.seconds
    }
}
