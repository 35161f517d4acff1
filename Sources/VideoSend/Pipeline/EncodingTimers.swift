/// The two timed choices of the encoding thread, as values that take `now` (monotonic
/// microseconds): the still-screen repeat and the watchdog's reduced scale.

/// While the source is still (no frame arrives), the last frame is encoded again once a
/// `interval`, stamped now, so a receiver that lost a frame or joined late gets a picture and the
/// rate controller keeps its figures.
public struct StillFrameRepeat: Sendable, Equatable {
    public let intervalMicros: Int64

    public init(intervalMicros: Int64 = 1_000_000) { self.intervalMicros = intervalMicros }

    /// True when a frame encoded at `lastEncodedMicros` is due again at `now` (nothing encoded
    /// yet: nothing to repeat).
    public func due(lastEncodedMicros: Int64?, now: Int64) -> Bool {
        guard let lastEncodedMicros else { return false }
        return now - lastEncodedMicros >= intervalMicros
    }
}

/// The watchdog's second rung: a fresh encoder at `scale` of the size until `untilMicros`; when
/// that time has come, another fresh encoder at the full size.
public struct ReducedScale: Sendable, Equatable {
    public let scale: Double
    public let untilMicros: Int64

    /// Nil when `scale` is not a reduction (1 or more): the full size at once.
    public init?(scale: Double, forSeconds seconds: Double, now: Int64) {
        guard scale < 1, scale > 0 else { return nil }
        self.scale = scale
        untilMicros = now + Int64(seconds * 1_000_000)
    }

    public func expired(now: Int64) -> Bool { now >= untilMicros }

    /// A size reduced by `scale`, kept even and at least 2 (what the encoders take).
    public func apply(width: Int, height: Int) -> (width: Int, height: Int) {
        (max(2, Int(Double(width) * scale) & ~1), max(2, Int(Double(height) * scale) & ~1))
    }
}

/// Keeps the encoder's output at its target, in the manner of libwebrtc's frame dropper: a bucket
/// fills with every encoded frame's bits and drains at the target; while it holds more than
/// `allowanceMicros` of the target, frames are dropped before encoding. x264's VBV and libvpx's
/// buffer let a second run to 1.5 × the target (a keyframe at a new size, content that turns
/// complex at once), and libvpx at its highest quantizer cannot go lower at all on busy content:
/// on a link that carries the target and little more, that is loss, NACKs, keyframes asked for,
/// and more of the same. A keyframe that was asked for always goes.
///
/// It also measures the output against the target once a second (`lastPercent`, the stats'
/// `overshootPercent`).
public struct OvershootGuard: Sendable, Equatable {
    public static let windowMicros: Int64 = 1_000_000
    /// How much of the target the bucket may hold before frames are dropped.
    public static let allowanceMicros: Int64 = 200_000
    /// The bucket drains this much faster than the target: libvpx's own allowance over it
    /// (`rc_overshoot_pct` 15). An encoder on its target wanders above and below it from second to
    /// second, and a bucket that never holds less than nothing, drained at the target itself,
    /// turns that wandering into drops: libvpx at 1080p on 1.1 Mbit/s, each second within 15 % of
    /// its target, lost 38 frames of 600 to it. Only running over by more than that fills it now.
    public static let drainFactor = 1.15

    /// The last whole second's output against its target, in percent (negative: under).
    public private(set) var lastPercent: Int = 0
    private var bucketBits = 0.0
    private var lastMicros: Int64?
    private var windowStart: Int64?
    private var windowBits = 0

    public init() {}

    /// Frames are being dropped to bring the output back to the target.
    public func dropping(target: Int) -> Bool {
        bucketBits > Double(target) * Double(Self.allowanceMicros) / 1_000_000
    }

    /// One encoded frame of `bytes` at `now`, with the target then.
    public mutating func encoded(bytes: Int, target: Int, now: Int64) {
        drain(target: target, now: now)
        bucketBits += Double(bytes * 8)
        windowBits += bytes * 8
    }

    /// Whether a frame may be encoded at `now` (false: drop it to let the output come back).
    public mutating func allows(target: Int, now: Int64) -> Bool {
        drain(target: target, now: now)
        return !dropping(target: target)
    }

    private mutating func drain(target: Int, now: Int64) {
        if let last = lastMicros {
            let drained = Double(target) * Self.drainFactor * Double(max(0, now - last)) / 1_000_000
            bucketBits = max(0, bucketBits - drained)
        }
        lastMicros = now
        guard let start = windowStart else {
            windowStart = now
            return
        }
        guard now - start >= Self.windowMicros else { return }
        let rate = Double(windowBits) * 1_000_000 / Double(now - start)
        lastPercent = Int(((rate / Double(max(target, 1)) - 1) * 100).rounded())
        windowStart = now
        windowBits = 0
    }
}

/// A keyframe at least every `intervalMicros`, whatever the frame rate; and the first keyframe
/// once more `startRepeatMicros` (a second) after it. A receiver that never got the first packet of
/// a stream cannot ask for it — aiortc's NACKs start at the first packet it sees — so without a
/// second keyframe a lost first one costs a whole interval of black.
public struct KeyframeClock: Sendable, Equatable {
    public static let startRepeatMicros: Int64 = 1_000_000
    public let intervalMicros: Int64
    public private(set) var lastKeyframeMicros: Int64?
    public private(set) var keyframes = 0

    public init(intervalMicros: Int64) { self.intervalMicros = intervalMicros }

    public mutating func keyframe(at now: Int64) {
        lastKeyframeMicros = now
        keyframes += 1
    }

    /// True when the next frame at `now` should be a keyframe.
    public func due(now: Int64) -> Bool {
        guard let last = lastKeyframeMicros else { return false }
        return now - last >= (keyframes == 1 ? min(Self.startRepeatMicros, intervalMicros) : intervalMicros)
    }
}
