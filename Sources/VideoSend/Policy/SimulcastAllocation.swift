/// How a simulcast screen's share of the estimate is split over its layers (full, 1/2 and 1/4 size,
/// best first), the way libwebrtc splits it: the lowest layer first, then each layer above it while
/// what is left covers that layer's minimum; what remains after every active layer has its
/// minimum goes to the layers from the bottom up to their maxima. A layer the estimate cannot carry
/// is switched off, and every layer above it with it. A layer that was switched off comes back
/// only when what is left covers its minimum with the send policies' margin (`SendShaper.upMargin`,
/// 20 %) for their hold (`SendShaper.upHold`, 5 s): a wobbling estimate does not turn it on and
/// off, and each return costs a keyframe.
///
/// A pure value: callers pass the time.
public struct SimulcastAllocation: Sendable, Equatable {
    public struct Layer: Sendable, Equatable {
        public var rid: String
        /// The size divisor against the source: 1, 2, 4.
        public var divisor: Int
        public var minBitrate: Int
        public var maxBitrate: Int

        public init(rid: String, divisor: Int, minBitrate: Int, maxBitrate: Int) {
            self.rid = rid
            self.divisor = divisor
            self.minBitrate = minBitrate
            self.maxBitrate = maxBitrate
        }
    }

    public let layers: [Layer]
    /// Which layers are on, best first (the lowest always is).
    public private(set) var active: [Bool]
    /// Since when what is left has covered each switched-off layer's minimum with the margin.
    private var coveredSince: [Int64?]

    public init(layers: [Layer]) {
        self.layers = layers
        active = Array(repeating: true, count: layers.count)
        coveredSince = Array(repeating: nil, count: layers.count)
    }

    /// The layers of a screen whose stream may use `maxBitrate`, best first, with libwebrtc's
    /// simulcast rates for their sizes: the quarter size 30–150 kbit/s, the half size 150–500,
    /// the full size from 300 up to what the stream may use.
    public static func screen(rids: [String], maxBitrate: Int) -> SimulcastAllocation {
        let count = rids.count
        let layers = rids.enumerated().map { index, rid -> Layer in
            let fromBottom = count - 1 - index
            let divisor = 1 << index
            switch fromBottom {
            case 0 where count > 1:
                return Layer(rid: rid, divisor: divisor, minBitrate: 30_000, maxBitrate: 150_000)
            case 1 where count > 2:
                return Layer(rid: rid, divisor: divisor, minBitrate: 150_000, maxBitrate: 500_000)
            default:
                return Layer(rid: rid, divisor: divisor, minBitrate: 300_000, maxBitrate: max(300_000, maxBitrate))
            }
        }
        return SimulcastAllocation(layers: layers)
    }

    public static let upMargin = SendShaper.upMargin
    public static let upHoldMicros: Int64 = 5_000_000

    /// The bitrate of each layer for `budget` (nil: the layer is off), best first.
    public mutating func allocate(_ budget: Int, nowMicros: Int64) -> [Int?] {
        guard !layers.isEmpty else { return [] }
        var left = max(0, budget)
        var on = Array(repeating: false, count: layers.count)
        // Minimums, from the bottom up; the lowest layer is always on.
        for index in layers.indices.reversed() {
            let layer = layers[index]
            let isLowest = index == layers.count - 1
            var keep = isLowest
            if !isLowest, on[index + 1] {
                if active[index] {
                    keep = left >= layer.minBitrate
                } else if Double(left) >= Double(layer.minBitrate) * Self.upMargin {
                    let since = coveredSince[index] ?? nowMicros
                    coveredSince[index] = since
                    keep = nowMicros - since >= Self.upHoldMicros
                } else {
                    coveredSince[index] = nil
                }
            } else {
                coveredSince[index] = nil
            }
            if keep {
                on[index] = true
                coveredSince[index] = nil
                left -= min(left, layer.minBitrate)
            }
        }
        active = on
        var rates = layers.indices.map { on[$0] ? min(layers[$0].minBitrate, max(0, budget)) : 0 }
        // The rest, from the bottom up to each layer's maximum.
        for index in layers.indices.reversed() where on[index] {
            let room = layers[index].maxBitrate - rates[index]
            let given = min(room, left)
            rates[index] += max(0, given)
            left -= max(0, given)
        }
        return layers.indices.map { on[$0] ? rates[$0] : nil }
    }
}
