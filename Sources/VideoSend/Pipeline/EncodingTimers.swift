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
