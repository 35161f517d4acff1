/// The video side of the receive jitter buffer, a pure value: RTP packets go in as they arrive
/// and come out in sequence order, so frames reach the depayloader in order and a frame after a
/// missing packet never goes ahead of it. A missing packet holds the ones after it for up to
/// `wait` (reordering, or the retransmission a NACK asked for), measured from when the hole showed
/// (the first packet after it arrived); then it is given up and the stream goes on (the
/// depayloader then sees the gap and drops that frame, and the receiver waits for a keyframe).
/// With nothing missing, packets come out as soon as they are in.
///
/// Sequence numbers are RTP's 16-bit ones, across the wrap. A packet up to `restartDistance`
/// behind what was released is late and dropped; further behind or ahead, the sender has started
/// numbering afresh: what is held comes out (its holes given up) and the new numbering is followed.
public struct VideoReorderBuffer<Element: Sendable>: Sendable {
    public struct Counters: Sendable, Equatable {
        public var released = 0
        /// Packets that filled a hole later packets had left (late, or retransmitted in time).
        public var reordered = 0
        /// Packets given up: holes that were never filled in time.
        public var skipped = 0
        public var droppedLate = 0
        public var droppedDuplicate = 0
        public var restarts = 0
    }

    public static var restartDistance: UInt16 { 1000 }

    /// How long a hole holds what follows it; the receiver sets it from the round-trip time.
    public var wait: Duration
    /// More held than this releases at once, holes skipped (a stream that jumped far ahead).
    public let capacity: Int
    private var held: [UInt16: (element: Element, arrived: ContinuousClock.Instant)] = [:]
    private var next: UInt16?
    /// What a restart pushed out, ahead of everything else.
    private var flushed: [Element] = []
    public private(set) var counters = Counters()

    public init(wait: Duration = .milliseconds(100), capacity: Int = 1000) {
        self.wait = wait
        self.capacity = capacity
    }

    public var count: Int { held.count + flushed.count }

    public mutating func insert(sequence: UInt16, _ element: Element, now: ContinuousClock.Instant) {
        if let expected = next {
            let behind = expected &- sequence, ahead = sequence &- expected
            if behind != 0 && behind < 0x8000 {
                guard behind > Self.restartDistance else {
                    counters.droppedLate += 1
                    return
                }
                restart(at: sequence)
            } else if ahead > Self.restartDistance && ahead < 0x8000 {
                restart(at: sequence)
            }
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

    /// The sender numbers afresh from `sequence`: everything held goes out in order first.
    private mutating func restart(at sequence: UInt16) {
        flushed += drain()
        counters.restarts += 1
        next = sequence
    }

    /// Everything held, in order, holes given up; the buffer then starts afresh with the next
    /// packet (a new stream from the sender).
    public mutating func drain() -> [Element] {
        var out = flushed
        flushed = []
        if let expected = next {
            for sequence in held.keys.sorted(by: { UInt16($0 &- expected) < UInt16($1 &- expected) }) {
                let gap = Int(UInt16(sequence &- (next ?? sequence)))
                counters.skipped += gap
                out.append(held.removeValue(forKey: sequence)!.element)
                counters.released += 1
                next = sequence &+ 1
            }
        }
        held = [:]
        next = nil
        return out
    }

    /// What may go on now, in order.
    public mutating func release(now: ContinuousClock.Instant) -> [Element] {
        var out = flushed
        flushed = []
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
        guard let oldest = held.values.map(\.arrived).min() else { return nil }
        return flushed.isEmpty ? oldest + wait : oldest  // a restart's flush is due at once
    }
}
