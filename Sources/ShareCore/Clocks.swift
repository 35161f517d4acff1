#if canImport(Glibc)
    import Glibc
#endif

/// The two clock readings the media path uses. Code that decides takes `now` as a parameter;
/// only the threads that feed it read these.
public enum Clocks {
    /// Monotonic microseconds (CLOCK_MONOTONIC), for capture times and ages.
    public static func monotonicMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// Wall-clock milliseconds since 1970 (CLOCK_REALTIME), for timecodes that two processes on
    /// one machine compare.
    public static func wallMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }
}
