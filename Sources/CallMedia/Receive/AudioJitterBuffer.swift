/// The receive jitter buffer for one Opus stream (DESIGN.md "Audio"), a pure value: packets go in
/// with `insert`, and the playout clock asks for one 20 ms frame at a time with `pull(now:)`.
///
/// - It starts playing once it holds its target delay: 60 ms, or 120 ms after two underruns within
///   10 s, back to 60 ms after 30 s without one. An underrun (nothing to play) buffers up to the
///   target again.
/// - Overflow (more than the target plus 100 ms held) drops the oldest 20 ms.
/// - A missing packet with later ones already here is waited for 20 ms (reordering), then
///   concealed; a packet that arrives after its turn is dropped as late.
/// - A timestamp gap on continuous sequence numbers (the sender skipped time: a frame that missed
///   its send deadline keeps no sequence number) is played as that much silence, not counted as
///   a loss (at most a second of it).
/// - An epoch change (another SSRC, or numbering that jumped more than 1,000 frames from where
///   playout is: the sender started again) discards the old audio and starts afresh.
///
/// Sequence numbers are RTP's 16-bit ones; each packet is one 20 ms frame (960 timestamp units).
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
        /// The sender skipped time here: play silence, which is no loss.
        case silence
    }

    public struct Counters: Sendable, Equatable {
        public var inserted = 0
        public var played = 0
        public var concealed = 0
        public var underruns = 0
        public var droppedLate = 0
        public var droppedDuplicate = 0
        public var droppedOverflow = 0
        /// Frames of silence played for the sender's timestamp gaps.
        public var silenceInserted = 0
        /// Times the stream started again (another SSRC, or renumbered), and the frames of the old
        /// stream that were still held then.
        public var epochs = 0
        public var droppedEpoch = 0
    }

    public static var samplesPerFrame: UInt32 { 960 }
    /// Further than this from where playout is, a sequence number is a new epoch.
    public static var restartDistance: UInt16 { 1_000 }
    /// The longest timestamp gap played as silence (50 frames: a second).
    public static var longestGap: UInt32 { 50 }

    private var frames: [UInt16: (payload: Payload, arrived: ContinuousClock.Instant, timestamp: UInt32?)] = [:]
    /// The SSRC of the epoch, once a packet said it.
    private var source: UInt32?
    /// The last frame played, for the timestamp gap before the next.
    private var lastPlayed: (sequence: UInt16, timestamp: UInt32)?
    /// Silence still to play before the frame `next`, for its timestamp gap.
    private var silenceOwed = 0
    private var gapPaidFor: UInt16?
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

    /// One packet; `timestamp` and `source` (its SSRC) are optional for callers that only order.
    public mutating func insert(
        sequence: UInt16, timestamp: UInt32? = nil, source: UInt32? = nil, payload: Payload,
        now: ContinuousClock.Instant
    ) {
        if let source, let known = self.source, source != known { startEpoch() }
        if let source { self.source = source }
        if let next, Self.distance(sequence, next) > Self.restartDistance { startEpoch() }
        if let next, Self.precedes(sequence, next) {
            counters.droppedLate += 1
            return
        }
        guard frames[sequence] == nil else {
            counters.droppedDuplicate += 1
            return
        }
        frames[sequence] = (payload, now, timestamp)
        counters.inserted += 1
        if !playing, let first = next, Self.precedes(sequence, first) { next = sequence }
        if next == nil { next = sequence }
        trimOverflow()
    }

    /// Drops the oldest frames while more than the target plus the margin is held.
    private mutating func trimOverflow() {
        while held > target + Self.overflowMargin, let oldest = oldestSequence {
            frames[oldest] = nil
            silenceOwed = 0
            gapPaidFor = nil
            lastPlayed = nil
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
        if silenceOwed > 0 {
            silenceOwed -= 1
            counters.silenceInserted += 1
            return .silence
        }
        if let entry = frames[expected] {
            if gapPaidFor != expected, let timestamp = entry.timestamp, let last = lastPlayed,
                last.sequence &+ 1 == expected
            {
                let skipped = (timestamp &- last.timestamp) / Self.samplesPerFrame
                if skipped > 1, skipped <= Self.longestGap + 1 {
                    gapPaidFor = expected
                    silenceOwed = Int(skipped) - 2
                    counters.silenceInserted += 1
                    return .silence
                }
            }
            frames[expected] = nil
            next = expected &+ 1
            counters.played += 1
            lastPlayed = entry.timestamp.map { (expected, $0) }
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
        lastPlayed = nil
        counters.concealed += 1
        return .conceal
    }

    /// The stream started again: what is held of the old one goes.
    private mutating func startEpoch() {
        counters.droppedEpoch += frames.count
        frames = [:]
        next = nil
        playing = false
        lastPlayed = nil
        silenceOwed = 0
        gapPaidFor = nil
        source = nil
        counters.epochs += 1
    }

    /// How far apart two sequence numbers are, either way round.
    static func distance(_ a: UInt16, _ b: UInt16) -> UInt16 {
        min(a &- b, b &- a)
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
