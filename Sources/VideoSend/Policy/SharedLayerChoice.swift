/// Which of a screen's shared layer encoders (full, 1/2 and 1/4 size, best first) one connection of
/// a mesh is sent: the largest layer its own estimate carries. A layer is carried from the rate
/// the layer below it tops out at (`SimulcastAllocation.screen`: the half size from 150 kbit/s,
/// the full size from 500 kbit/s); the smallest always is.
///
/// - Down at once: an estimate under the current layer's floor moves the connection to the largest
///   layer it carries.
/// - Up with the send policies' margin (`SendShaper.upMargin`, 20 % over the floor) held for their
///   hold (5 s), so a wobbling estimate does not switch layers (each switch waits for a keyframe).
///   In its first `startupMicros` a connection moves up at once: the start-up probes set the
///   estimate in its first second, and waiting 5 s there would show a small picture for nothing.
/// - A receiver whose keyframe did not get through (`keyframeDidNotGetThrough`) is held one
///   layer smaller for `smallerMicros`: the smaller keyframe it needs is the layer below's.
///
/// A pure value: callers pass the time. The switch itself happens at the new layer's next
/// keyframe; this says only which layer is wanted.
public struct SharedLayerChoice: Sendable, Equatable {
    /// Each layer's floor, best first (the smallest layer's is 0).
    public let floors: [Int]
    /// The layer wanted now (nil before the first `choose`).
    public private(set) var layer: Int?
    private var startedAt: Int64?
    private var coveredSince: Int64?
    /// A receiver's keyframe did not get through: nothing better than this layer until then.
    private var heldSmaller: Held?

    private struct Held: Sendable, Equatable {
        var layer: Int
        var untilMicros: Int64
    }

    public static let startupMicros: Int64 = 3_000_000
    public static let upHoldMicros = SimulcastAllocation.upHoldMicros
    public static let smallerMicros: Int64 = 5_000_000

    public init(floors: [Int]) {
        self.floors = floors.isEmpty ? [0] : floors
    }

    /// The floors of `allocation`'s layers: each layer from the maximum of the one below it.
    public init(allocation: SimulcastAllocation) {
        let layers = allocation.layers
        self.init(
            floors: layers.indices.map { index in index + 1 < layers.count ? layers[index + 1].maxBitrate : 0 })
    }

    /// The layer wanted for the connection's estimate `targetBitrate` at `nowMicros`.
    public mutating func choose(targetBitrate: Int, nowMicros: Int64) -> Int {
        let last = floors.count - 1
        // The held-smaller floor: no layer better than this one until it ends.
        var best = 0
        if let held = heldSmaller {
            if nowMicros < held.untilMicros { best = held.layer } else { heldSmaller = nil }
        }
        let carried = max(best, floors.firstIndex { targetBitrate >= $0 } ?? last)
        guard let current = layer, let since = startedAt else {
            layer = carried
            startedAt = nowMicros
            return carried
        }
        if carried >= current {
            // The same, or down (a larger index is a smaller layer): at once.
            layer = carried
            coveredSince = nil
            return carried
        }
        let withMargin = floors.indices.first { index in
            index >= best && Double(targetBitrate) >= Double(floors[index]) * SendShaper.upMargin
        }
        guard let up = withMargin, up < current else {
            coveredSince = nil
            return current
        }
        if nowMicros - since < Self.startupMicros {
            layer = up
            return up
        }
        let covered = coveredSince ?? nowMicros
        coveredSince = covered
        guard nowMicros - covered >= Self.upHoldMicros else { return current }
        layer = up
        coveredSince = nil
        return up
    }

    /// The last keyframe did not reach the receiver: one layer smaller (if there is one) for
    /// `smallerMicros`. Returns the layer wanted now.
    public mutating func holdSmaller(nowMicros: Int64) -> Int {
        let next = min(floors.count - 1, (layer ?? 0) + 1)
        layer = next
        coveredSince = nil
        heldSmaller = Held(layer: next, untilMicros: nowMicros + Self.smallerMicros)
        if startedAt == nil { startedAt = nowMicros }
        return next
    }
}
