// RFC 3550 §4 NTP timestamp format, as carried in sender reports
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |            seconds since 1900-01-01 00:00 UTC (wraps)         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                    fraction of a second (2^-32)               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// A 64-bit NTP timestamp: 32 bits of seconds and 32 bits of fraction.
public struct NTPTimestamp: Hashable, Sendable, Comparable {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The time `duration` after the NTP epoch (1900-01-01), wrapping every 2^32 s. Negative
    /// durations give zero. The caller supplies the time; wire code reads no clock.
    public init(sinceEpoch duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else {
            self.init(rawValue: 0)
            return
        }
        // fraction = attoseconds × 2^32 / 10^18, computed without overflow in 128 bits.
        let product = UInt64(attoseconds).multipliedFullWidth(by: 1 << 32)
        let fraction = UInt64(1_000_000_000_000_000_000).dividingFullWidth((product.high, product.low)).quotient
        self.init(seconds: UInt32(truncatingIfNeeded: seconds), fraction: UInt32(truncatingIfNeeded: fraction))
    }

    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The middle 32 bits (16.16 fixed point), as echoed in a report block's LSR field.
    public var compact: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// The time since the NTP epoch (modulo the 2^32 s wrap).
    public var sinceEpoch: Duration {
        .seconds(Int64(seconds)) + .nanoseconds(Int64((UInt64(fraction) * 1_000_000_000) >> 32))
    }

    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }
}
