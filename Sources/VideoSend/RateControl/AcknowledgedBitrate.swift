/// The rate at which packets reached the receiver, from transport-wide feedback: bytes received
/// over a sliding window of arrival times (the receiver's clock). Tells the rate controller what
/// the link actually carried, which a decrease starts from and an increase may not run far past.
/// Beside it, the rate at which the same packets were sent (our clock): a sender that sent far
/// less than its target is application-limited, and then what arrived says little about the link.
public struct AcknowledgedBitrate: Sendable {
    public var windowMicros: Int64 = 500_000
    private var arrivals: [(micros: Int64, size: Int, sendMicros: Int64)] = []
    private var head = 0
    private var bytesInWindow = 0

    public init() {}

    public mutating func add(_ packets: [PacketFeedback]) {
        for packet in packets {
            guard let arrival = packet.arrivalMicros else { continue }
            arrivals.append((arrival, packet.size, packet.sendMicros))
            bytesInWindow += packet.size
        }
        guard let newest = arrivals.last?.micros else { return }
        while head < arrivals.count, newest - arrivals[head].micros > windowMicros {
            bytesInWindow -= arrivals[head].size
            head += 1
        }
        if head > 1024 { arrivals.removeFirst(head); head = 0 }
    }

    /// Bits per second over the window; nil until the window spans at least 100 ms.
    public var bitsPerSecond: Int? {
        guard head < arrivals.count, let newest = arrivals.last?.micros else { return nil }
        let span = newest - arrivals[head].micros
        guard span >= 100_000 else { return nil }
        // The first packet's bytes arrived before the window's start; count the span it opens.
        let bytes = bytesInWindow - arrivals[head].size
        return Int(Int64(bytes) * 8 * 1_000_000 / span)
    }

    /// The send rate of the packets in the window (bits per second), nil as `bitsPerSecond` is.
    public var sentBitsPerSecond: Int? {
        guard head < arrivals.count, bitsPerSecond != nil else { return nil }
        var first = Int64.max, last = Int64.min, bytes = 0
        for entry in arrivals[head...] {
            first = min(first, entry.sendMicros)
            last = max(last, entry.sendMicros)
            bytes += entry.size
        }
        // The span the window's sends cover, at least the arrivals' (a burst sent at once).
        let span = max(last - first, 100_000)
        return Int(Int64(bytes) * 8 * 1_000_000 / span)
    }
}
