/// What the one-way delay says about the link (draft-ietf-rmcat-gcc-02 §5.4–5.5).
public enum BandwidthUsage: String, Sendable {
    /// Queues are steady.
    case normal
    /// Delay grows: a queue is building at the bottleneck.
    case overusing
    /// Delay shrinks: a queue is draining.
    case underusing
}

/// The delay-based half of the estimate: packets are grouped by send time (a burst of 5 ms is one
/// group, as the pacer releases them), the change of one-way delay between consecutive groups
/// (arrival delta − send delta) is accumulated and smoothed, and the trend of that curve over the
/// last `windowSize` groups (a least-squares slope) is compared with an adaptive threshold
/// (draft-ietf-rmcat-gcc-02 §5.4, and the trendline filter libwebrtc uses instead of the draft's
/// Kalman filter). A value: times come in the packets, no clock is read.
public struct DelayBasedDetector: Sendable {
    public struct Configuration: Sendable {
        public var burstMicros: Int64 = 5_000
        public var windowSize = 20
        public var smoothing = 0.9
        public var gain = 4.0
        /// How long the trend must exceed the threshold before it counts as overuse.
        public var overuseMicros: Int64 = 10_000
        public var initialThresholdMs = 12.5
        public var thresholdRangeMs: ClosedRange<Double> = 6...600
        /// Threshold adaptation (GCC's K_u and K_d): it rises slowly and falls fast.
        public var thresholdUp = 0.0087
        public var thresholdDown = 0.039
        public init() {}
    }

    private struct Group {
        var firstSendMicros: Int64
        var lastSendMicros: Int64
        var lastArrivalMicros: Int64
        var size: Int
    }

    public let configuration: Configuration
    public private(set) var state: BandwidthUsage = .normal
    /// The last modified trend (ms, scaled as the threshold is) and the threshold.
    public private(set) var trend = 0.0
    public private(set) var thresholdMs: Double
    private var current: Group?
    private var previous: Group?
    private var firstArrivalMicros: Int64?
    private var accumulatedDelayMs = 0.0
    private var smoothedDelayMs = 0.0
    private var samples: [(x: Double, y: Double)] = []
    private var groupsSeen = 0
    private var overuseAccumulatedMicros: Int64 = 0
    private var overuseCount = 0
    private var previousTrend = 0.0
    private var lastThresholdUpdateMicros: Int64?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        thresholdMs = configuration.initialThresholdMs
    }

    /// Feeds received packets (sorted by sequence; lost ones are skipped) and returns the usage.
    @discardableResult
    public mutating func update(_ packets: [PacketFeedback]) -> BandwidthUsage {
        for packet in packets {
            guard let arrival = packet.arrivalMicros else { continue }
            add(sendMicros: packet.sendMicros, arrivalMicros: arrival, size: packet.size)
        }
        return state
    }

    private mutating func add(sendMicros: Int64, arrivalMicros: Int64, size: Int) {
        guard var group = current else {
            current = Group(
                firstSendMicros: sendMicros, lastSendMicros: sendMicros, lastArrivalMicros: arrivalMicros,
                size: size)
            return
        }
        // A reordered packet sent before this group began belongs to no new group.
        if sendMicros < group.firstSendMicros { return }
        // Packets that arrive together, sooner after the group than they were sent, came out of a
        // queue in one go (a receiver's scheduler, a link layer): they are one group, or the
        // bunching reads as a delay swing.
        let arrivalDelta = arrivalMicros - group.lastArrivalMicros
        let arrivedInBurst =
            arrivalDelta <= configuration.burstMicros
            && arrivalDelta - (sendMicros - group.lastSendMicros) < 0
        if sendMicros - group.firstSendMicros <= configuration.burstMicros || arrivedInBurst {
            group.lastSendMicros = max(group.lastSendMicros, sendMicros)
            group.lastArrivalMicros = max(group.lastArrivalMicros, arrivalMicros)
            group.size += size
            current = group
            return
        }
        // The group is complete: compare it with the one before.
        if let previous {
            let sendDelta = group.lastSendMicros - previous.lastSendMicros
            let arrivalDelta = group.lastArrivalMicros - previous.lastArrivalMicros
            groupComplete(
                sendDeltaMicros: sendDelta, arrivalDeltaMicros: arrivalDelta, arrivalMicros: group.lastArrivalMicros)
        }
        previous = group
        current = Group(
            firstSendMicros: sendMicros, lastSendMicros: sendMicros, lastArrivalMicros: arrivalMicros, size: size)
    }

    private mutating func groupComplete(sendDeltaMicros: Int64, arrivalDeltaMicros: Int64, arrivalMicros: Int64) {
        groupsSeen += 1
        let gradientMs = Double(arrivalDeltaMicros - sendDeltaMicros) / 1000
        accumulatedDelayMs += gradientMs
        smoothedDelayMs = configuration.smoothing * smoothedDelayMs + (1 - configuration.smoothing) * accumulatedDelayMs
        let first = firstArrivalMicros ?? arrivalMicros
        firstArrivalMicros = first
        samples.append((Double(arrivalMicros - first) / 1000, smoothedDelayMs))
        if samples.count > configuration.windowSize { samples.removeFirst() }
        guard samples.count == configuration.windowSize, let slope = Self.slope(samples) else { return }
        let modified = Double(min(groupsSeen, 60)) * slope * configuration.gain
        detect(modifiedTrend: modified, sendDeltaMicros: sendDeltaMicros, nowMicros: arrivalMicros)
    }

    private mutating func detect(modifiedTrend: Double, sendDeltaMicros: Int64, nowMicros: Int64) {
        trend = modifiedTrend
        if modifiedTrend > thresholdMs {
            overuseAccumulatedMicros += max(sendDeltaMicros, 1)
            overuseCount += 1
            if overuseAccumulatedMicros > configuration.overuseMicros, overuseCount > 1, modifiedTrend >= previousTrend
            {
                overuseAccumulatedMicros = 0
                overuseCount = 0
                state = .overusing
            }
        } else if modifiedTrend < -thresholdMs {
            overuseAccumulatedMicros = 0
            overuseCount = 0
            state = .underusing
        } else {
            overuseAccumulatedMicros = 0
            overuseCount = 0
            state = .normal
        }
        previousTrend = modifiedTrend
        adaptThreshold(modifiedTrend: modifiedTrend, nowMicros: nowMicros)
    }

    /// γ rises towards |m| slowly and falls fast, so a competing TCP flow cannot starve us and a
    /// sudden spike is not ignored (draft-ietf-rmcat-gcc-02 §5.4).
    private mutating func adaptThreshold(modifiedTrend: Double, nowMicros: Int64) {
        let last = lastThresholdUpdateMicros ?? nowMicros
        lastThresholdUpdateMicros = nowMicros
        let magnitude = abs(modifiedTrend)
        // A spike far above the threshold is a glitch, not a reason to move the threshold.
        if magnitude > thresholdMs + 15 { return }
        let k = magnitude < thresholdMs ? configuration.thresholdDown : configuration.thresholdUp
        let elapsedMs = min(Double(nowMicros - last) / 1000, 100)
        thresholdMs += k * (magnitude - thresholdMs) * elapsedMs
        thresholdMs = min(
            max(thresholdMs, configuration.thresholdRangeMs.lowerBound), configuration.thresholdRangeMs.upperBound)
    }

    static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / n
        let meanY = points.reduce(0) { $0 + $1.y } / n
        var numerator = 0.0, denominator = 0.0
        for p in points {
            numerator += (p.x - meanX) * (p.y - meanY)
            denominator += (p.x - meanX) * (p.x - meanX)
        }
        return denominator == 0 ? nil : numerator / denominator
    }
}
