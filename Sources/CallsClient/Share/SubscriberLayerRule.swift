/// Which simulcast layer a Janus subscriber asks for. Janus 1.1 forwards the layer each subscriber
/// asks for (`substream`) and does not choose by bandwidth, so the subscriber judges from its own
/// receive figures, once a second:
/// - a second is **bad** when more than 10 % of its packets were lost, when packets came but no
///   frame was decoded (a freeze), or when the path's queue held more than 150 ms (the delay-based
///   reading of `ArrivalDelay`: a link that carries less than is sent queues before it drops);
/// - it is **good** when under 2 % were lost, frames were decoded and the queue held under 50 ms;
/// - two bad seconds in a row step down a layer (a freeze alone steps at once); the two seconds
///   after a switch are not judged (the new layer starts from a keyframe, and the old one's packets
///   are still arriving), and before the first frame is decoded waiting is not a freeze;
/// - good seconds for `upHold` (8 s at first) step up a layer. A step up that turns bad within
///   10 s doubles the hold (up to 64 s), so a link just short of a layer is not tried every few
///   seconds; 30 s on a layer reached by stepping up brings the hold back to 8 s;
/// - what the link carried when it failed is remembered for `capacityMemory` (60 s): the most that
///   arrived in the bad seconds of a step down for loss or a queue. A layer that needed as much
///   (90 % of it or more, from what arrived while it was received) is not stepped up to until then:
///   a viewer on a 400 kbit/s downlink does not try a 330 kbit/s layer again every 8 s.
///
/// A pure value; the caller passes the time. Layers are Janus's substreams: 0 the smallest, `top`
/// the largest.
public struct SubscriberLayerRule: Sendable, Equatable {
    public struct Second: Sendable, Equatable {
        public var nowMicros: Int64
        public var packets: Int
        public var lost: Int
        public var framesDecoded: Int
        public var queuingDelayMs: Double?
        /// What arrived over the second, kbit/s.
        public var receivedKbps: Int?

        public init(
            nowMicros: Int64, packets: Int, lost: Int, framesDecoded: Int, queuingDelayMs: Double? = nil,
            receivedKbps: Int? = nil
        ) {
            self.nowMicros = nowMicros
            self.packets = packets
            self.lost = lost
            self.framesDecoded = framesDecoded
            self.queuingDelayMs = queuingDelayMs
            self.receivedKbps = receivedKbps
        }

        var lossFraction: Double { packets + lost > 0 ? Double(max(0, lost)) / Double(packets + max(0, lost)) : 0 }
        var frozen: Bool { packets > 0 && framesDecoded == 0 }
        func bad(decoding: Bool) -> Bool { congested || (decoding && frozen) }
        /// Lost or queued: the link carried less than was sent.
        var congested: Bool { lossFraction > 0.10 || (queuingDelayMs ?? 0) > 150 }
        var good: Bool { lossFraction < 0.02 && framesDecoded > 0 && (queuingDelayMs ?? 0) < 50 }
    }

    public static let firstUpHoldMicros: Int64 = 8_000_000
    public static let longestUpHoldMicros: Int64 = 64_000_000
    static let settleMicros: Int64 = 2_000_000
    static let failedUpMicros: Int64 = 10_000_000
    static let provenUpMicros: Int64 = 30_000_000
    public static let capacityMemoryMicros: Int64 = 60_000_000

    public let top: Int
    /// The layer asked for now.
    public private(set) var layer: Int
    public private(set) var upHoldMicros = firstUpHoldMicros
    private var badSeconds = 0
    private var goodSince: Int64?
    private var switchedAt: Int64?
    private var steppedUpAt: Int64?
    /// A frame has been decoded: from then on a second without one is a freeze.
    private var decoding = false
    /// The most that arrived in a second on each layer while it was received, kbit/s.
    private var layerKbps: [Int: Int] = [:]
    /// What the link carried when it last failed: the most that arrived in a congested second
    /// before a step down, and when.
    public struct Capacity: Sendable, Equatable {
        public var kbps: Int
        public var atMicros: Int64
    }

    public private(set) var capacity: Capacity?
    private var congestedKbps: Int?

    /// Starts at `layer` (Janus sends the largest unless asked otherwise).
    public init(top: Int = 2, layer: Int? = nil) {
        self.top = max(0, top)
        self.layer = min(max(0, layer ?? top), max(0, top))
    }

    /// One second's figures; returns the layer to ask for when it changes, else nil.
    public mutating func update(_ second: Second) -> Int? {
        let now = second.nowMicros
        if let upAt = steppedUpAt, now - upAt >= Self.provenUpMicros {
            upHoldMicros = Self.firstUpHoldMicros
            steppedUpAt = nil
        }
        if let at = switchedAt, now - at < Self.settleMicros { return nil }
        let wasDecoding = decoding
        if second.framesDecoded > 0 { decoding = true }
        if let kbps = second.receivedKbps { layerKbps[layer] = max(layerKbps[layer] ?? 0, kbps) }
        if second.bad(decoding: wasDecoding) {
            goodSince = nil
            badSeconds += 1
            if second.congested, let kbps = second.receivedKbps { congestedKbps = max(congestedKbps ?? 0, kbps) }
            guard layer > 0, badSeconds >= 2 || (wasDecoding && second.frozen) else { return nil }
            if let upAt = steppedUpAt, now - upAt < Self.failedUpMicros {
                upHoldMicros = min(Self.longestUpHoldMicros, upHoldMicros * 2)
            }
            steppedUpAt = nil
            if let carried = congestedKbps { capacity = Capacity(kbps: carried, atMicros: now) }
            return move(to: layer - 1, now: now)
        }
        badSeconds = 0
        congestedKbps = nil
        guard second.good else {
            goodSince = nil
            return nil
        }
        let since = goodSince ?? now
        goodSince = since
        guard layer < top, now - since >= upHoldMicros, fits(layer + 1, now: now) else { return nil }
        steppedUpAt = now
        return move(to: layer + 1, now: now)
    }

    /// Whether `next` may be tried: nothing remembered says the link carries less than it needed.
    private func fits(_ next: Int, now: Int64) -> Bool {
        guard let capacity, now - capacity.atMicros < Self.capacityMemoryMicros, let needed = layerKbps[next] else {
            return true
        }
        return Double(needed) < 0.9 * Double(capacity.kbps)
    }

    private mutating func move(to next: Int, now: Int64) -> Int {
        layer = next
        switchedAt = now
        badSeconds = 0
        goodSince = nil
        congestedKbps = nil
        // What the layer needs is measured afresh each time it is received.
        layerKbps[next] = nil
        return next
    }
}
