/// The receive jitter buffer for one Opus stream (DESIGN.md "Audio"), a pure value: packets go in
/// with `insert`, and the playout clock asks for one 20 ms frame at a time with `pull(now:)`.
///
/// - It starts playing once it holds its target delay: 60 ms, or 120 ms after two underruns within
///   10 s, back to 60 ms after 30 s without one. An underrun (nothing to play) buffers up to the
///   target again.
/// - Overflow (more than the target plus 100 ms held) drops the oldest 20 ms.
/// - A missing packet with later ones already here is waited for 20 ms (reordering), then
///   concealed; a packet that arrives after its turn is dropped as late.
///
/// Sequence numbers are RTP's 16-bit ones; each packet is one 20 ms frame.
public struct AudioJitterBuffer<Payload: Sendable>: Sendable {
    public static var frameDuration: Duration { .milliseconds(20) }
    public static var baseDelay: Duration { .milliseconds(60) }
    public static var raisedDelay: Duration { .milliseconds(120) }
    public static var underrunWindow: Duration { .seconds(10) }
    public static var cleanPeriod: Duration { .seconds(30) }
    public static var overflowMargin: Duration { .milliseconds(100) }
    public static var reorderWait: Duration { .milliseconds(20) }

    public enum Pull: Sendable {
        /// The next frame, in order.
        case frame(Payload)
        /// A frame is missing: play a concealed one (Opus PLC) in its place.
        case conceal
        /// Still filling up to the target delay (at the start or after an underrun), or waiting
        /// for a reordered frame: play silence.
        case buffering
    }

    public struct Counters: Sendable, Equatable {
        public var inserted = 0
        public var played = 0
        public var concealed = 0
        public var underruns = 0
        public var droppedLate = 0
        public var droppedDuplicate = 0
        public var droppedOverflow = 0
    }

    private var frames: [UInt16: (payload: Payload, arrived: ContinuousClock.Instant)] = [:]
    /// The sequence number to play next, once playing has begun.
    private var next: UInt16?
    private var playing = false
    private var underrunTimes: [ContinuousClock.Instant] = []
    private var raisedAt: ContinuousClock.Instant?
    public private(set) var target: Duration = Self.baseDelay
    public private(set) var counters = Counters()

    public init() {}

    /// How much audio is held (20 ms per packet).
    public var held: Duration { Self.frameDuration * frames.count }

    public mutating func insert(sequence: UInt16, payload: Payload, now: ContinuousClock.Instant) {
        if let next, Self.precedes(sequence, next) {
            counters.droppedLate += 1
            return
        }
        guard frames[sequence] == nil else {
            counters.droppedDuplicate += 1
            return
        }
        frames[sequence] = (payload, now)
        counters.inserted += 1
        if !playing, let first = next, Self.precedes(sequence, first) { next = sequence }
        if next == nil { next = sequence }
        trimOverflow()
    }

    /// Drops the oldest frames while more than the target plus the margin is held.
    private mutating func trimOverflow() {
        while held > target + Self.overflowMargin, let oldest = oldestSequence {
            frames[oldest] = nil
            counters.droppedOverflow += 1
            next = oldestSequence ?? oldest &+ 1
        }
    }

    /// The frame to play now (called every 20 ms by the playout clock).
    public mutating func pull(now: ContinuousClock.Instant) -> Pull {
        relax(now: now)
        if !playing {
            guard held >= target, let oldest = oldestSequence else { return .buffering }
            playing = true
            next = oldest
        }
        guard let expected = next else { return .buffering }
        if let entry = frames.removeValue(forKey: expected) {
            next = expected &+ 1
            counters.played += 1
            return .frame(entry.payload)
        }
        guard let noticed = frames.values.map(\.arrived).min() else {
            // Nothing at all to play: an underrun. Fill up to the target again.
            underrun(now: now)
            return .buffering
        }
        // A hole with later frames here (noticed when the first of them came): give the missing
        // one 20 ms to arrive out of order, then conceal it.
        guard now - noticed >= Self.reorderWait else { return .buffering }
        next = expected &+ 1
        counters.concealed += 1
        return .conceal
    }

    private mutating func underrun(now: ContinuousClock.Instant) {
        counters.underruns += 1
        playing = false
        underrunTimes = underrunTimes.filter { now - $0 < Self.underrunWindow } + [now]
        if underrunTimes.count >= 2, target < Self.raisedDelay {
            target = Self.raisedDelay
        }
        if target == Self.raisedDelay { raisedAt = now }
    }

    /// Back to the base delay after a clean period at the raised one; what is held over the lower
    /// limit goes at once (found by FuzzStreamReceive: until the next packet came, the buffer
    /// held 200 ms against a 160 ms limit).
    private mutating func relax(now: ContinuousClock.Instant) {
        if target == Self.raisedDelay, let raisedAt, now - raisedAt >= Self.cleanPeriod {
            target = Self.baseDelay
            self.raisedAt = nil
            underrunTimes = []
            trimOverflow()
        }
    }

    private var oldestSequence: UInt16? {
        guard let anchor = next ?? frames.keys.first else { return nil }
        return frames.keys.min { UInt16($0 &- anchor) < UInt16($1 &- anchor) }
    }

    /// True when `a` comes before `b` in RTP's wrapping order.
    static func precedes(_ a: UInt16, _ b: UInt16) -> Bool {
        a != b && (b &- a) < 0x8000
    }
}

extension AudioJitterBuffer.Pull: Equatable where Payload: Equatable {}
