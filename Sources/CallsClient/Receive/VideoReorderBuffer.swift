/// The video side of the receive jitter buffer, a pure value: RTP packets go in as they arrive
/// and come out in sequence order. A missing packet holds the ones after it for up to `wait`
/// (reordering, or a NACKed retransmission arriving), then is given up and the stream goes on
/// (the depayloader then sees the gap, drops that frame and the receiver asks for a keyframe).
///
/// Sequence numbers are RTP's 16-bit ones; anything older than what was released is dropped.
public struct VideoReorderBuffer<Element: Sendable>: Sendable {
    public struct Counters: Sendable, Equatable {
        public var released = 0
        public var reordered = 0
        public var skipped = 0
        public var droppedLate = 0
        public var droppedDuplicate = 0
    }

    public let wait: Duration
    /// More held than this releases at once, holes skipped (a stream that jumped far ahead).
    public let capacity: Int
    private var held: [UInt16: (element: Element, arrived: ContinuousClock.Instant)] = [:]
    private var next: UInt16?
    public private(set) var counters = Counters()

    public init(wait: Duration = .milliseconds(100), capacity: Int = 1000) {
        self.wait = wait
        self.capacity = capacity
    }

    public var count: Int { held.count }

    public mutating func insert(sequence: UInt16, _ element: Element, now: ContinuousClock.Instant) {
        if let next, AudioJitterBuffer<Int>.precedes(sequence, next) {
            counters.droppedLate += 1
            return
        }
        guard held[sequence] == nil else {
            counters.droppedDuplicate += 1
            return
        }
        if held.keys.contains(where: { AudioJitterBuffer<Int>.precedes(sequence, $0) }) {
            counters.reordered += 1  // it fills a hole that later packets had left
        }
        held[sequence] = (element, now)
        if next == nil { next = sequence }
    }

    /// What may go on now, in order.
    public mutating func release(now: ContinuousClock.Instant) -> [Element] {
        var out: [Element] = []
        while let expected = next, !held.isEmpty {
            if let entry = held.removeValue(forKey: expected) {
                out.append(entry.element)
                next = expected &+ 1
                counters.released += 1
                continue
            }
            // A hole: wait for it while the oldest packet after it is younger than `wait`.
            let oldest = held.values.map(\.arrived).min()!
            guard now - oldest >= wait || held.count > capacity else { break }
            let after = held.keys.min { UInt16($0 &- expected) < UInt16($1 &- expected) }!
            counters.skipped += Int(UInt16(after &- expected))
            next = after
        }
        return out
    }

    /// When `release` may next give something out although nothing new arrives (a hole's wait
    /// ends), or nil when nothing is held.
    public var nextDeadline: ContinuousClock.Instant? {
        held.values.map(\.arrived).min().map { $0 + wait }
    }
}
