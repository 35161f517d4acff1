/// REMB messages (draft-alvestrand-rmcat-remb) as one figure for the whole connection. A receiver
/// may send one REMB for every stream it takes (Chromium lists them all) or one per stream (aiortc
/// runs an estimator per receiver, so a screen and a camera each get their own): the latest
/// estimate of each set of streams is kept, a newer set replaces any set it overlaps, a set not
/// heard from for `lifetimeMicros` is dropped, and the figure is the sum of the sets kept.
/// Without this, a small stream's estimate would be taken as the whole connection's.
public struct REMBSum: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        var ssrcs: Set<UInt32>
        var bitrate: Int
        var atMicros: Int64
    }

    public let lifetimeMicros: Int64
    private var entries: [Entry] = []

    public init(lifetimeMicros: Int64 = 5_000_000) {
        self.lifetimeMicros = lifetimeMicros
    }

    /// One REMB in; the connection's figure out. A REMB listing no stream stands for all of them.
    public mutating func received(bitrate: Int, ssrcs: [UInt32], nowMicros: Int64) -> Int {
        let set = Set(ssrcs)
        entries.removeAll { entry in
            nowMicros - entry.atMicros > lifetimeMicros || set.isEmpty || entry.ssrcs.isEmpty
                || !entry.ssrcs.isDisjoint(with: set)
        }
        entries.append(Entry(ssrcs: set, bitrate: max(0, bitrate), atMicros: nowMicros))
        return entries.reduce(0) { $0 + $1.bitrate }
    }

    /// How many sets of streams the figure adds up now.
    public var sets: Int { entries.count }
}
