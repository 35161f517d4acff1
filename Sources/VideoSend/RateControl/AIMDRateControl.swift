import Foundation

/// The rate controller of the delay-based estimate (draft-ietf-rmcat-gcc-02 §5.5): additive
/// increase near the link's known capacity, multiplicative increase away from it, multiplicative
/// decrease to β × what the receiver got when the detector sees overuse.
///
/// Ramp-up: until the first overuse the increase is `startPhaseIncrease` per second (50 %), so a
/// clean link's capacity is found in seconds without probing; after that it is 8 % per second
/// away from the last capacity and about one packet per response time near it. An increase never
/// runs past 1.2 × the acknowledged rate (+10 kbit/s): an estimate the link never carried must not
/// float up, or the content's first busy second after a cheap stretch (an encoder that sent 70 %
/// of its target sends all of it) goes out at a rate the link never showed it carries — on a
/// 600 kbit/s link, 1.5 × (libwebrtc's figure, which has probes and ALR beside it) let a
/// 480 kbit/s sender's target reach 720 and lose a fifth of two seconds. A sender that sent under half
/// of the estimate is application-limited: what arrived says nothing of the capacity, so an
/// overuse (a keyframe burst) decreases from the estimate, not from the little that arrived.
public struct AIMDRateControl: Sendable {
    public enum Phase: String, Sendable { case hold, increase, decrease }

    public struct Configuration: Sendable {
        public var beta = 0.85
        public var increasePerSecond = 1.08
        public var startPhaseIncrease = 1.5
        /// An increase never runs past this much over the acknowledged rate (+10 kbit/s).
        public var throughputHeadroom = 1.2
        public var averagePacketBits = 1200.0 * 8
        public init() {}
    }

    public let configuration: Configuration
    public private(set) var estimate: Int
    public private(set) var phase: Phase = .hold
    public private(set) var inStartPhase = true
    /// The link capacity seen at past decreases (bits per second), averaged, with its variance.
    public private(set) var linkCapacity: Double?
    private var linkCapacityVariance = 0.0
    private var lastChangeMicros: Int64?
    private var lastDecreaseMicros: Int64?

    public init(startBitrate: Int, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        estimate = startBitrate
    }

    /// One step, on each feedback: the detector's usage, the acknowledged rate, the round trip.
    @discardableResult
    public mutating func update(
        usage: BandwidthUsage, acknowledged: Int?, sent: Int? = nil, rttMicros: Int64,
        bounds: ClosedRange<Int>, nowMicros: Int64
    ) -> Int {
        let applicationLimited = Double(sent ?? acknowledged ?? 0) < 0.5 * Double(estimate)
        switch usage {
        case .overusing: phase = .decrease
        case .underusing: phase = .hold
        case .normal: if phase == .hold { phase = .increase }
        }
        let elapsed = Double(min(max(nowMicros - (lastChangeMicros ?? nowMicros), 0), 1_000_000)) / 1_000_000
        switch phase {
        case .hold:
            break
        case .increase:
            if let capacity = linkCapacity, let acknowledged,
                Double(acknowledged) > capacity + 3 * linkCapacityVariance.squareRoot()
            {
                // The link carries more than it did: its old capacity no longer tells anything.
                linkCapacity = nil
            }
            var increased: Double
            if linkCapacity != nil {
                let responseSeconds = Double(rttMicros + 100_000) / 1_000_000
                increased = Double(estimate) + max(1000, configuration.averagePacketBits / responseSeconds) * elapsed
            } else {
                let factor = inStartPhase ? configuration.startPhaseIncrease : configuration.increasePerSecond
                increased = Double(estimate) * pow(factor, elapsed)
            }
            if let acknowledged {
                increased = min(
                    increased, max(Double(estimate), configuration.throughputHeadroom * Double(acknowledged) + 10_000))
            }
            estimate = Int(increased)
        case .decrease:
            // Again only after a round trip (10–200 ms), so one overuse is one decrease.
            let interval = min(max(rttMicros, 10_000), 200_000)
            if let last = lastDecreaseMicros, nowMicros - last < interval { break }
            let basis = Double(applicationLimited ? estimate : acknowledged ?? estimate)
            estimate = min(estimate, Int(configuration.beta * basis))
            if let acknowledged, !applicationLimited { noteCapacity(Double(acknowledged)) }
            inStartPhase = false
            lastDecreaseMicros = nowMicros
            phase = .hold
        }
        estimate = min(max(estimate, bounds.lowerBound), bounds.upperBound)
        lastChangeMicros = nowMicros
        return estimate
    }

    /// A bandwidth probe showed `bitsPerSecond` delivered: the estimate starts from there. When
    /// the probe found the bottleneck (`atCapacity`), that is the link's capacity: the start phase
    /// ends and increases are additive near it, as after a decrease.
    public mutating func setEstimate(
        _ bitsPerSecond: Int, atCapacity: Bool, bounds: ClosedRange<Int>, nowMicros: Int64
    ) {
        estimate = min(max(bitsPerSecond, bounds.lowerBound), bounds.upperBound)
        if atCapacity {
            noteCapacity(Double(estimate))
            inStartPhase = false
        }
        lastChangeMicros = nowMicros
    }

    private mutating func noteCapacity(_ sample: Double) {
        guard let mean = linkCapacity else {
            linkCapacity = sample
            linkCapacityVariance = (0.1 * sample) * (0.1 * sample)
            return
        }
        let next = 0.95 * mean + 0.05 * sample
        let deviation = sample - next
        linkCapacityVariance = 0.95 * linkCapacityVariance + 0.05 * deviation * deviation
        linkCapacity = next
    }
}
