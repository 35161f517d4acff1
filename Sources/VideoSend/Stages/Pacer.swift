/// The pacer's decisions (a value, no clock): packets wait in three queues and leave as a budget
/// allows, earned at the pacing rate — 2.5 × the target bitrate, as libwebrtc paces — so a large
/// keyframe is spread over several milliseconds instead of leaving in one burst that a shallow
/// bottleneck queue would drop.
///
/// Order: audio first, then retransmissions, then video (FIFO within each). Audio never waits on
/// the budget (it is small and late audio is useless); its bytes still spend budget.
///
/// Latency stays bounded two ways: the rate rises so what waits has left by the time the oldest
/// packet has waited `maximumQueueMicros` (500 ms), and once `maximumPackets` wait, a new video or retransmission
/// packet is refused (the caller counts it as a send failure; a receiver NACKs or asks for a
/// keyframe). Nothing already queued is dropped, so a frame is never cut in the middle by the pacer.
///
/// Retransmissions have a budget of their own, taken from the video's: `retransmissionShare` of
/// the target (a quarter), saved up for at most `retransmissionBurstMicros`. A retransmission over
/// it is refused and counted (`retransmissionsRefused`): on a link that drops a tenth of what it
/// is sent, answering every NACK at once is what turns loss into a storm that takes the link
/// down with it. The receiver asks again, or asks for a keyframe.
///
/// Unless repairs wait (`setRepairWait`, set without transport-wide feedback while a bandwidth
/// probe runs or just failed):
/// then a retransmission over the budget waits for it, oldest first, for at most that long, and
/// one that waited longer is dropped (`retransmissionsExpired`, counted as refused too). The rate
/// stays the budget's; what changes is that a burst of loss is repaired whole, a little later,
/// instead of in part. A receiver that asks once for each packet — aiortc's NACK generator asks
/// again only when new loss shows — holds every later frame behind a hole until its jitter buffer
/// (128 packets: about 2 s at 600 kbit/s) gives up and asks for a keyframe, which then waits
/// behind the same hole.
///
/// Padding: while `paddingBitrate` is set (a bandwidth probe), an empty queue is topped up to that
/// rate with padding, counting what the queues released against it; `paddingDue` says how many
/// bytes of it may leave now.
///
/// Probe clusters (`startProbeClusters`): one after the other, each sends at its rate — the queue
/// paced at least that fast, an empty one topped up with padding — until its bytes have left;
/// `releaseTagged` and `paddingDueTagged` say which cluster each packet belongs to.
public struct Pacer<Packet: Sendable>: Sendable {
    public enum Priority: Int, Sendable, CaseIterable { case audio = 0, retransmission = 1, video = 2 }

    public struct Configuration: Sendable {
        public var pacingFactor = 2.5
        /// The most budget an idle pacer saves up: this long at the pacing rate.
        public var burstMicros: Int64 = 5_000
        public var maximumQueueMicros: Int64 = 500_000
        public var maximumPackets = 4096
        public var retransmissionShare = 0.25
        public var retransmissionBurstMicros: Int64 = 250_000
        /// Padding leaves in pieces of at least this much (about one padding-only packet).
        public var paddingPiece = 200
        /// At most this many retransmissions wait for the budget (`setRepairWait`).
        public var maximumWaitingRepairs = 512
        public init() {}
    }

    public struct Counters: Sendable, Equatable {
        public var enqueued = 0
        public var released = 0
        public var refused = 0
        public var bytesReleased = 0
        /// Retransmissions refused for the budget.
        public var retransmissionsRefused = 0
        /// Bytes of retransmissions taken into the queue (what repair costs the link).
        public var retransmissionBytes = 0
        /// Bytes of padding let out (`paddingDue`).
        public var paddingBytes = 0
        /// Retransmissions that waited for the budget (`setRepairWait`), and of those, the ones
        /// dropped for waiting longer than it allows (also in `retransmissionsRefused`).
        public var retransmissionsWaited = 0
        public var retransmissionsExpired = 0
    }

    private struct Entry {
        var packet: Packet
        var size: Int
        var enqueuedMicros: Int64
    }

    public let configuration: Configuration
    public private(set) var targetBitrate: Int
    public private(set) var counters = Counters()
    private var queues: [[Entry]] = [[], [], []]
    private var heads = [0, 0, 0]
    private var queuedBytes = 0
    private var budgetBytes = 0.0
    private var lastMicros: Int64?
    private var retransmissionBytes: Double?
    private var retransmissionMicros: Int64 = 0
    /// The rate an empty queue is topped up to with padding; 0: none.
    public private(set) var paddingBitrate = 0
    private var paddingBudgetBytes = 0.0
    private var paddingMicros: Int64?
    private var clusters: [ProbeCluster] = []
    private var clusterBytesLeft = 0
    /// How long a retransmission over the budget waits for it; 0: refused at once.
    public private(set) var repairWaitMicros: Int64 = 0
    /// Retransmissions waiting for the budget, oldest first: `repair` names the packet repaired,
    /// so one asked for again while it waits is not queued twice.
    private struct WaitingRepair {
        var entry: Entry
        var repair: Int64?
        var deadlineMicros: Int64
    }
    private var waitingRepairs: [WaitingRepair] = []

    public init(targetBitrate: Int, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.targetBitrate = max(targetBitrate, 1)
    }

    public mutating func setTargetBitrate(_ bitsPerSecond: Int) { targetBitrate = max(bitsPerSecond, 1) }

    /// Retransmissions over the budget wait for it this long (0: refused at once, as they are
    /// while transport-wide feedback arrives: libwebrtc's NACK module asks again every round trip).
    public mutating func setRepairWait(_ micros: Int64) { repairWaitMicros = max(0, micros) }

    /// Retransmissions waiting for the budget.
    public var waitingRepairCount: Int { waitingRepairs.count }

    /// Tops an idle queue up to `bitsPerSecond` with padding (0 stops it).
    public mutating func setPaddingBitrate(_ bitsPerSecond: Int) {
        if bitsPerSecond <= 0 {
            paddingBudgetBytes = 0
            paddingMicros = nil
        }
        paddingBitrate = max(0, bitsPerSecond)
    }

    /// Sends `clusters` one after the other, after any still running.
    public mutating func startProbeClusters(_ more: [ProbeCluster]) {
        if clusters.isEmpty, let first = more.first { clusterBytesLeft = first.bytes }
        clusters += more
    }

    /// The probe cluster running now.
    public var activeCluster: ProbeCluster? { clusters.first }

    private mutating func clusterSent(_ bytes: Int) {
        guard !clusters.isEmpty else { return }
        clusterBytesLeft -= bytes
        guard clusterBytesLeft <= 0 else { return }
        clusters.removeFirst()
        clusterBytesLeft = clusters.first?.bytes ?? 0
        // The next cluster (or the plain padding rate) starts from nothing saved.
        paddingBudgetBytes = 0
    }

    /// The rate an empty queue is topped up to now: a cluster's, or the padding rate.
    private var effectivePaddingBitrate: Int { max(paddingBitrate, clusters.first?.bitrate ?? 0) }

    public mutating func paddingDue(nowMicros: Int64) -> Int { paddingDueTagged(nowMicros: nowMicros).bytes }

    /// Bytes of padding that may leave now: the padding rate's earnings since the last call, less
    /// what the queues released meanwhile (at most 100 ms of it saved, at most a second's worth of
    /// debt), a burst's worth at a time; nothing while packets wait or under `paddingPiece`. What
    /// it returns is counted as sent; `cluster`: the probe cluster it belongs to.
    public mutating func paddingDueTagged(nowMicros: Int64) -> (bytes: Int, cluster: Int?) {
        let effective = effectivePaddingBitrate
        guard effective > 0 else { return (0, nil) }
        let rate = Double(effective)
        let burst = max(rate * Double(configuration.burstMicros) / 8_000_000, Double(configuration.paddingPiece))
        if let last = paddingMicros {
            paddingBudgetBytes += rate * Double(max(0, nowMicros - last)) / 8_000_000
        }
        paddingBudgetBytes = min(max(paddingBudgetBytes, -rate / 8), max(rate / 80, burst))
        paddingMicros = nowMicros
        guard queuedPackets == 0, paddingBudgetBytes >= Double(configuration.paddingPiece) else { return (0, nil) }
        let cluster = clusters.first
        var bytes = Int(min(paddingBudgetBytes, burst))
        if cluster != nil { bytes = min(bytes, max(clusterBytesLeft, configuration.paddingPiece)) }
        paddingBudgetBytes -= Double(bytes)
        counters.paddingBytes += bytes
        clusterSent(bytes)
        return (bytes, cluster?.id)
    }

    public var queuedPackets: Int { (0..<3).reduce(0) { $0 + queues[$1].count - heads[$1] } }
    public var queuedByteCount: Int { queuedBytes }

    /// The pacing rate now: 2.5 × target, or faster when the queue would otherwise not be empty
    /// by the time its oldest packet has waited `maximumQueueMicros`.
    public func pacingBitrate(nowMicros: Int64) -> Double {
        let paced = max(configuration.pacingFactor * Double(targetBitrate), Double(clusters.first?.bitrate ?? 0))
        guard queuedBytes > 0 else { return paced }
        let remaining = max(configuration.maximumQueueMicros - queueDelayMicros(nowMicros: nowMicros), 1_000)
        return max(paced, Double(queuedBytes) * 8 * 1_000_000 / Double(remaining))
    }

    /// How long the oldest waiting packet has waited.
    public func queueDelayMicros(nowMicros: Int64) -> Int64 {
        var oldest: Int64?
        for q in 0..<3 where heads[q] < queues[q].count {
            let t = queues[q][heads[q]].enqueuedMicros
            oldest = min(oldest ?? t, t)
        }
        return oldest.map { max(0, nowMicros - $0) } ?? 0
    }

    /// Queues a packet; false when the queue is full and it was refused. `repair`: for a
    /// retransmission, the packet it repairs (a stream and sequence number), so one asked for again
    /// while it waits for the budget is not queued twice.
    @discardableResult
    public mutating func enqueue(
        _ packet: Packet, size: Int, priority: Priority, nowMicros: Int64, repair: Int64? = nil
    ) -> Bool {
        if priority != .audio, queuedPackets >= configuration.maximumPackets {
            counters.refused += 1
            return false
        }
        let entry = Entry(packet: packet, size: size, enqueuedMicros: nowMicros)
        if priority == .retransmission {
            if let repair, waitingRepairs.contains(where: { $0.repair == repair }) { return true }
            // Behind the ones already waiting: the oldest hole holds the receiver's picture longest.
            let wait = repairWaitMicros > 0 && !waitingRepairs.isEmpty
            guard !wait, spendRetransmissionBudget(size, nowMicros: nowMicros) else {
                if repairWaitMicros > 0, waitingRepairs.count < configuration.maximumWaitingRepairs {
                    waitingRepairs.append(
                        WaitingRepair(entry: entry, repair: repair, deadlineMicros: nowMicros + repairWaitMicros))
                    counters.retransmissionsWaited += 1
                    return true
                }
                counters.retransmissionsRefused += 1
                return false
            }
            counters.retransmissionBytes += size
        }
        admit(entry, priority: priority)
        return true
    }

    private mutating func admit(_ entry: Entry, priority: Priority) {
        queues[priority.rawValue].append(entry)
        queuedBytes += entry.size
        counters.enqueued += 1
    }

    /// Retransmissions that waited long enough for the budget join the queue; ones that waited
    /// longer than `repairWaitMicros` are dropped.
    private mutating func admitWaitingRepairs(nowMicros: Int64) {
        var taken = 0
        defer { if taken > 0 { waitingRepairs.removeFirst(taken) } }
        for waiting in waitingRepairs {
            if nowMicros > waiting.deadlineMicros {
                counters.retransmissionsExpired += 1
                counters.retransmissionsRefused += 1
            } else {
                guard queuedPackets < configuration.maximumPackets,
                    spendRetransmissionBudget(waiting.entry.size, nowMicros: nowMicros)
                else { return }
                counters.retransmissionBytes += waiting.entry.size
                admit(waiting.entry, priority: .retransmission)
            }
            taken += 1
        }
    }

    /// The packets that may leave now, in order.
    public mutating func release(nowMicros: Int64) -> [Packet] { releaseTagged(nowMicros: nowMicros).map(\.packet) }

    /// The packets that may leave now, in order, each with the probe cluster it is part of.
    public mutating func releaseTagged(nowMicros: Int64) -> [(packet: Packet, cluster: Int?)] {
        if !waitingRepairs.isEmpty { admitWaitingRepairs(nowMicros: nowMicros) }
        let rate = pacingBitrate(nowMicros: nowMicros)
        let cap = rate * Double(configuration.burstMicros) / 8_000_000
        if let last = lastMicros {
            let earned = rate * Double(max(0, nowMicros - last)) / 8_000_000
            budgetBytes = min(budgetBytes + earned, max(cap, budgetBytes))
        } else {
            budgetBytes = cap
        }
        lastMicros = nowMicros
        var out: [(packet: Packet, cluster: Int?)] = []
        while let q = nextQueue() {
            if q != Priority.audio.rawValue, budgetBytes <= 0 { break }
            let entry = queues[q][heads[q]]
            heads[q] += 1
            if heads[q] > 256, heads[q] * 2 > queues[q].count {
                queues[q].removeFirst(heads[q])
                heads[q] = 0
            }
            queuedBytes -= entry.size
            budgetBytes -= Double(entry.size)
            if effectivePaddingBitrate > 0 { paddingBudgetBytes -= Double(entry.size) }
            counters.released += 1
            counters.bytesReleased += entry.size
            let cluster = clusters.first?.id
            clusterSent(entry.size)
            out.append((entry.packet, cluster))
        }
        // An empty queue keeps no debt beyond one burst and no credit beyond one burst.
        if queuedPackets == 0 { budgetBytes = max(budgetBytes, -cap) }
        return out
    }

    /// How long until the budget lets the next packet go (0 when one may leave now, nil when the
    /// queue is empty).
    public func microsUntilNextRelease(nowMicros: Int64) -> Int64? {
        let repair = microsUntilWaitingRepair(nowMicros: nowMicros)
        guard let q = nextQueue() else { return repair }
        if q == Priority.audio.rawValue || budgetBytes > 0 { return 0 }
        let queued = Int64((-budgetBytes * 8_000_000 / pacingBitrate(nowMicros: nowMicros)).rounded(.up)) + 1
        return min(queued, repair ?? queued)
    }

    /// How long until the oldest waiting retransmission fits the budget or has waited too long
    /// (nil: none waits).
    private func microsUntilWaitingRepair(nowMicros: Int64) -> Int64? {
        guard let first = waitingRepairs.first else { return nil }
        let (budget, perSecond) = retransmissionBudget(nowMicros: nowMicros)
        let due = Int64((max(0, Double(first.entry.size) - budget) * 1_000_000 / perSecond).rounded(.up))
        return max(0, min(due, first.deadlineMicros + 1 - nowMicros))
    }

    /// The retransmission budget now (bytes) and what it earns a second.
    private func retransmissionBudget(nowMicros: Int64) -> (bytes: Double, perSecond: Double) {
        let perSecond = max(configuration.retransmissionShare * Double(targetBitrate) / 8, 1)
        let cap = max(perSecond * Double(configuration.retransmissionBurstMicros) / 1_000_000, 3_000)
        let saved = retransmissionBytes ?? cap
        return (min(cap, saved + perSecond * Double(max(0, nowMicros - retransmissionMicros)) / 1_000_000), perSecond)
    }

    /// Whether a retransmission of `size` bytes fits the budget now; spends it if so.
    private mutating func spendRetransmissionBudget(_ size: Int, nowMicros: Int64) -> Bool {
        let budget = retransmissionBudget(nowMicros: nowMicros).bytes
        retransmissionMicros = nowMicros
        guard budget >= Double(size) else {
            retransmissionBytes = budget
            return false
        }
        retransmissionBytes = budget - Double(size)
        return true
    }

    private func nextQueue() -> Int? {
        (0..<3).first { heads[$0] < queues[$0].count }
    }
}
