/// What retransmissions cost the link, taken off what the encoders are given, in the manner of
/// libwebrtc's protection overhead: the estimate is what the link carries in all, so an encoder
/// given all of it and then repaired by RTX sends more than the link carries — loss, more NACKs,
/// more repair. Once a second the bytes of retransmission queued since the last tick become a rate,
/// smoothed over about three seconds (one lost keyframe's repair should not halve the picture),
/// and at most `maximumShare` of the target (the pacer's budget for retransmissions) is held back.
///
/// A value: the caller passes the pacer's running byte count and the time.
public struct RepairCost: Sendable, Equatable {
    public static let maximumShare = 0.25
    public static let smoothing = 0.3

    /// The smoothed retransmission rate, bits per second.
    public private(set) var bitsPerSecond = 0.0
    private var lastBytes: Int?
    private var lastMicros: Int64 = 0

    public init() {}

    /// The pacer's total of retransmission bytes at `nowMicros`.
    public mutating func update(totalBytes: Int, nowMicros: Int64) {
        defer { (lastBytes, lastMicros) = (totalBytes, nowMicros) }
        guard let lastBytes, nowMicros > lastMicros, totalBytes >= lastBytes else { return }
        let rate = Double(totalBytes - lastBytes) * 8_000_000 / Double(nowMicros - lastMicros)
        bitsPerSecond += Self.smoothing * (rate - bitsPerSecond)
    }

    /// What the video encoders may have of `target` once `reserve` (the audio and the packets'
    /// overhead) and the repair are taken off.
    public func videoBitrate(target: Int, reserve: Int) -> Int {
        let repair = min(bitsPerSecond, Self.maximumShare * Double(target))
        return max(0, target - reserve - Int(repair))
    }
}
