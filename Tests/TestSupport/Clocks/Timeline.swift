/// Instants on a manual clock: a start read once, and offsets from it. The rules under test take
/// `now` as a parameter and are given these; nothing after the start reads a clock.
///
///     let t = Timeline()               // t(150) is 150 ms after the start
///     let at = Timeline(.seconds)      // at(1.5) is 1.5 s after it
public struct Timeline: Sendable {
    public enum Unit: Sendable { case milliseconds, seconds }

    public let start: ContinuousClock.Instant
    public let unit: Unit

    public init(_ unit: Unit = .milliseconds, start: ContinuousClock.Instant = .now) {
        self.unit = unit
        self.start = start
    }

    /// `count` units after the start.
    public func callAsFunction(_ count: Int) -> ContinuousClock.Instant {
        switch unit {
        case .milliseconds: start + .milliseconds(count)
        case .seconds: start + .seconds(count)
        }
    }

    /// `count` units after the start, to the millisecond.
    public func callAsFunction(_ count: Double) -> ContinuousClock.Instant {
        switch unit {
        case .milliseconds: start + .milliseconds(Int64(count))
        case .seconds: start + .milliseconds(Int64(count * 1000))
        }
    }
}
