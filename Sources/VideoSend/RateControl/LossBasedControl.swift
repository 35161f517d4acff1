import Foundation

/// The loss-based half of the estimate (draft-ietf-rmcat-gcc-02 §6): over 10 % loss with a queue
/// building (the delay-based detector saw overuse within `queueMemoryMicros`), or over `heavyLoss`
/// whatever the delay does, the limit drops to (1 − loss/2) of the rate, at most once per 300 ms +
/// a round trip; under 2 % it rises by 8 % a second and stops limiting once it passes the other
/// estimates; in between it holds — and 2–10 % lost with no queue (the path's loss: a lossy radio
/// link, a policer upstream) rises by the same 8 %. Classic loss-based control cuts on every count
/// over 10 %: on a path that loses a tenth at random half the counts read over, and the rate is
/// cut step by step to the floor (a Chromium receiver on 10 % loss ended at 180 kbit/s).
/// Loss is counted over at least `minimumPackets` reported packets and `minimumMicros` (a second,
/// like a receiver report's interval): over 20 packets, 5 % random loss reads as over 10 % one
/// time in thirteen.
public struct LossBasedControl: Sendable {
    public var minimumPackets = 20
    public var minimumMicros: Int64 = 1_000_000
    /// Loss this heavy lowers the limit with or without a queue.
    public static let heavyLoss = 0.2
    /// The limit loss imposes, or nil while loss limits nothing.
    public private(set) var limit: Int?
    /// The fraction lost in the last complete count.
    public private(set) var lastFraction: Double?
    private var lost = 0
    private var total = 0
    private var countStartMicros: Int64?
    private var lastDecreaseMicros: Int64?
    private var lastIncreaseMicros: Int64?

    public init() {}

    /// `lost` of `total` packets were reported; `current` is what the rate would be without
    /// this limit.
    public mutating func report(
        lost: Int, total: Int, current: Int, rttMicros: Int64, queueing: Bool = true, nowMicros: Int64
    ) {
        self.lost += lost
        self.total += total
        let start = countStartMicros ?? nowMicros
        countStartMicros = start
        guard self.total >= minimumPackets, nowMicros - start >= minimumMicros else { return }
        let fraction = Double(self.lost) / Double(self.total)
        self.lost = 0
        self.total = 0
        countStartMicros = nowMicros
        apply(fraction: fraction, current: current, rttMicros: rttMicros, queueing: queueing, nowMicros: nowMicros)
    }

    /// A fraction already counted by someone else (an RTCP receiver report's fraction lost).
    public mutating func apply(
        fraction: Double, current: Int, rttMicros: Int64, queueing: Bool = true, nowMicros: Int64
    ) {
        lastFraction = fraction
        if fraction > Self.heavyLoss || (fraction > 0.10 && queueing) {
            if let last = lastDecreaseMicros, nowMicros - last < 300_000 + rttMicros { return }
            let from = min(limit ?? current, current)
            limit = Int(Double(from) * (1 - 0.5 * fraction))
            lastDecreaseMicros = nowMicros
            lastIncreaseMicros = nowMicros
        } else if fraction < 0.02 || (fraction <= 0.10 && !queueing) {
            guard let value = limit else { return }
            let elapsed = Double(min(max(nowMicros - (lastIncreaseMicros ?? nowMicros), 0), 1_000_000)) / 1_000_000
            let raised = Double(value) * exp(elapsed * log(1.08)) + 1000 * elapsed
            lastIncreaseMicros = nowMicros
            limit = raised >= Double(current) ? nil : Int(raised)
        } else {
            lastIncreaseMicros = nowMicros
        }
    }
}
