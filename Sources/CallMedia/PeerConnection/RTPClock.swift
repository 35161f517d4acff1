import ShareCore

/// Media time for RTP: the capture clock (microseconds) at `rate` Hz from a random origin.
final class RTPClock: Sendable {
    let rate: Int64
    private let origin = Locked<(micros: Int64, timestamp: UInt32)?>(nil)

    init(rate: Int64) { self.rate = rate }

    func timestamp(forMicros micros: Int64) -> UInt32 {
        let start = origin.withLock { o in
            if o == nil { o = (micros, UInt32.random(in: 0...UInt32.max)) }
            return o!
        }
        return start.timestamp &+ UInt32(truncatingIfNeeded: (micros - start.micros) * rate / 1_000_000)
    }
}
