/// A delay-based reading of what arrives: how much the path's queue holds now. Each packet's
/// one-way delay (its arrival against its RTP time) is taken relative to the stream's first; the
/// least of the last 10 s is the empty path, and the smoothed delay above it is the queue. A link
/// that carries less than is sent fills its queue before it drops: this rises first.
///
/// A pure value: the caller passes each packet's arrival time. Frames whose RTP time jumps by a
/// minute or more (a new stream under the same SSRC) start the reading afresh.
public struct ArrivalDelay: Sendable, Equatable {
    public let clockRate: Int
    /// The window the empty path's delay is the least of.
    public static let windowMicros: Int64 = 10_000_000
    static let bucketMicros: Int64 = 1_000_000

    private var last: (timestamp: UInt32, arrivalMicros: Int64)?
    /// This packet's delay against the first packet's, microseconds.
    private var relative: Int64 = 0
    /// The least delay of each second of the window, oldest first.
    private var minima: [(start: Int64, least: Int64)] = []
    private var smoothed: Double = 0

    public init(clockRate: Int) { self.clockRate = max(1, clockRate) }

    public static func == (a: Self, b: Self) -> Bool {
        a.clockRate == b.clockRate && a.relative == b.relative && a.smoothed == b.smoothed
            && a.minima.map(\.least) == b.minima.map(\.least)
    }

    /// The queue now, in milliseconds (0 before two packets).
    public var queuingMilliseconds: Double {
        guard let least = minima.map(\.least).min() else { return 0 }
        return max(0, smoothed - Double(least)) / 1000
    }

    public mutating func received(timestamp: UInt32, arrivalMicros: Int64) {
        defer { self.last = (timestamp, arrivalMicros) }
        guard let last else {
            start(arrivalMicros)
            return
        }
        // Signed RTP time since the last packet (wraps at 2^32), in microseconds.
        let ticks = Int64(Int32(bitPattern: timestamp &- last.timestamp))
        let media = ticks * 1_000_000 / Int64(clockRate)
        guard abs(media) < 60_000_000 else {
            start(arrivalMicros)
            return
        }
        relative += (arrivalMicros - last.arrivalMicros) - media
        smoothed += (Double(relative) - smoothed) / 8
        if let newest = minima.last, arrivalMicros - newest.start < Self.bucketMicros {
            minima[minima.count - 1].least = min(newest.least, relative)
        } else {
            minima.append((arrivalMicros, relative))
        }
        minima.removeAll { arrivalMicros - $0.start >= Self.windowMicros }
    }

    private mutating func start(_ arrivalMicros: Int64) {
        relative = 0
        smoothed = 0
        minima = [(arrivalMicros, 0)]
    }
}
