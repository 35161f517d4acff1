/// The fraction of our packets lost, counted in packets over the last receiver reports rather than
/// read from one report's 8-bit "fraction lost".
///
/// A report covers about a second. At a few hundred kbit/s that is two or three dozen video
/// packets, and one report's fraction of a path that loses a tenth at random reads anywhere from 0
/// to 40 %: 3 of 8 packets lost is 37.5 %. Taking the worst of the report's blocks (audio's and
/// video's) makes it noisier still. Each block carries the receiver's cumulative count of lost
/// packets and the highest sequence number it has seen, so the packets expected and lost between
/// two reports are known exactly: this adds them up over all of a report's blocks, and the
/// fraction is taken over the newest reports that together cover `minimumPackets` (within
/// `window`), as libwebrtc weighs loss by the packets it covers.
///
/// A value: every input carries `nowMicros`.
public struct ReportedLoss: Sendable, Equatable {
    /// Fewer packets than this are not a fraction worth acting on: older reports are added in.
    public static let minimumPackets = 200
    /// Reports older than this are not used, however few packets the newer ones cover.
    public static let windowMicros: Int64 = 5_000_000

    private struct Seen: Sendable, Equatable {
        var highest: UInt32
        var lost: Int32
    }

    private struct Interval: Sendable, Equatable {
        var expected: Int
        var lost: Int
        var atMicros: Int64
    }

    private var seen: [UInt32: Seen] = [:]
    private var intervals: [Interval] = []

    public init() {}

    /// One report block: the source it is about, the receiver's extended highest sequence number
    /// and cumulative lost count.
    public struct Block: Sendable, Equatable {
        public var ssrc: UInt32
        public var extendedHighestSequence: UInt32
        public var cumulativeLost: Int32

        public init(ssrc: UInt32, extendedHighestSequence: UInt32, cumulativeLost: Int32) {
            self.ssrc = ssrc
            self.extendedHighestSequence = extendedHighestSequence
            self.cumulativeLost = cumulativeLost
        }
    }

    /// One report's blocks. A source seen for the first time only sets its marks; a sequence that
    /// went back (a new stream on the same SSRC) sets them again.
    public mutating func report(_ blocks: [Block], nowMicros: Int64) {
        var expected = 0
        var lost = 0
        for block in blocks {
            defer { seen[block.ssrc] = Seen(highest: block.extendedHighestSequence, lost: block.cumulativeLost) }
            guard let before = seen[block.ssrc] else { continue }
            let more = Int(block.extendedHighestSequence) - Int(before.highest)
            guard more > 0, more < 1 << 16 else { continue }
            // Duplicates can make the cumulative count go down: never less than none, nor more than all.
            let missing = min(max(Int(block.cumulativeLost) - Int(before.lost), 0), more)
            expected += more
            lost += missing
        }
        guard expected > 0 else { return }
        intervals.append(Interval(expected: expected, lost: lost, atMicros: nowMicros))
        intervals.removeAll { nowMicros - $0.atMicros > Self.windowMicros }
        // Bound the list whatever the clock does.
        if intervals.count > 64 { intervals.removeFirst(intervals.count - 64) }
    }

    /// The fraction lost over the newest reports that cover `minimumPackets` (or all of the last
    /// `windowMicros`); nil before two reports have shown any packets.
    public func fraction(nowMicros: Int64) -> Double? {
        let (expected, lost) = window(nowMicros: nowMicros)
        guard expected > 0 else { return nil }
        return Double(lost) / Double(expected)
    }

    /// The packets the fraction is over (for the statistics).
    public func packets(nowMicros: Int64) -> Int { window(nowMicros: nowMicros).expected }

    /// Packets expected and lost over the newest reports that cover `minimumPackets`, within the window.
    private func window(nowMicros: Int64) -> (expected: Int, lost: Int) {
        var expected = 0
        var lost = 0
        for interval in intervals.reversed() where nowMicros - interval.atMicros <= Self.windowMicros {
            expected += interval.expected
            lost += interval.lost
            if expected >= Self.minimumPackets { break }
        }
        return (expected, lost)
    }
}
