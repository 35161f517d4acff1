/// When a Janus subscriber (`watch` of a Janus room) starts its subscription afresh: a new handle,
/// a new peer connection and decoder, and so a keyframe on its layer. It is the subscriber's own
/// rung above the keyframe: its receive path already asks for a keyframe (PLI, which Janus passes
/// to the publisher) when frames arrive and none decodes for 3 s; a decoder that still gives nothing
/// (wedged, or fed a stream it cannot recover from) needs a new one.
///
/// Judged once a second from what arrived and what decoded:
/// - a second is **stalled** when packets came and no frame decoded, once the subscription has
///   decoded a frame (or `firstFrameMicros` after it began: waiting for the first keyframe is not
///   a stall before then);
/// - `stallMicros` (8 s) of stalled seconds in a row restart the subscription, no sooner than
///   `gapMicros` after the last restart (20 s at first);
/// - a restart after which nothing decoded doubles that gap, up to `longestGapMicros`; 30 s of
///   decoding bring it back to 20 s;
/// - a second in which nothing arrived is not a stall: the publisher paused, or the link is down,
///   which a new decoder does not mend.
///
/// A pure value; the caller passes the time.
public struct SubscriptionRecoveryRule: Sendable, Equatable {
    public static let stallMicros: Int64 = 8_000_000
    public static let firstFrameMicros: Int64 = 10_000_000
    public static let firstGapMicros: Int64 = 20_000_000
    public static let longestGapMicros: Int64 = 80_000_000
    static let provenMicros: Int64 = 30_000_000

    /// When the current subscription began.
    private var beganMicros: Int64
    private var stalledSince: Int64?
    private var decoded = false
    private var decodingSince: Int64?
    private var lastRestartMicros: Int64?
    public private(set) var gapMicros = SubscriptionRecoveryRule.firstGapMicros
    /// Restarts so far.
    public private(set) var restarts = 0

    public init(beganMicros: Int64) {
        self.beganMicros = beganMicros
    }

    /// One second's figures; true when the subscription should start afresh now (the rule then
    /// counts it as begun at `nowMicros`).
    public mutating func update(nowMicros: Int64, packets: Int, framesDecoded: Int) -> Bool {
        if framesDecoded > 0 {
            decoded = true
            stalledSince = nil
            let since = decodingSince ?? nowMicros
            decodingSince = since
            if nowMicros - since >= Self.provenMicros { gapMicros = Self.firstGapMicros }
            return false
        }
        decodingSince = nil
        let waitingForFirst = !decoded && nowMicros - beganMicros < Self.firstFrameMicros
        guard packets > 0, !waitingForFirst else {
            stalledSince = nil
            return false
        }
        // The second just judged began a second ago: a stall counts from there.
        let since = stalledSince ?? (nowMicros - 1_000_000)
        stalledSince = since
        guard nowMicros - since >= Self.stallMicros else { return false }
        if let last = lastRestartMicros, nowMicros - last < gapMicros { return false }
        if lastRestartMicros != nil, !decoded { gapMicros = min(gapMicros * 2, Self.longestGapMicros) }
        lastRestartMicros = nowMicros
        restarts += 1
        beganMicros = nowMicros
        decoded = false
        stalledSince = nil
        return true
    }
}
