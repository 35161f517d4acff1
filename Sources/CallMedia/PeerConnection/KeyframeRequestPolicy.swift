/// When a video receiver asks its sender for a keyframe with a PLI (RFC 4585 §6.3.1):
/// - while it waits for one (nothing decodable has arrived yet, or a frame was dropped since the
///   last keyframe), at most once per `interval`;
/// - when its decoder gave no picture for `stuckAfter` while whole frames kept arriving (a decoder
///   that swallows what it is given), at most once per `stuckAfter`. libwebrtc's receiver asks the
///   same way when its frame buffer waits 3 s for a decodable frame; a sender whose own watchdog
///   cannot ask its encoder (a browser) sees its ladder's keyframes leave only through these.
///
/// A pure state machine: the caller passes `now`.
public struct KeyframeRequestPolicy: Sendable, Equatable {
    public static let defaultInterval: Int64 = 300_000
    public static let stuckAfter: Int64 = 3_000_000
    public let intervalMicros: Int64
    private var lastRequestMicros: Int64?
    /// The decoder's last progress: its count of decoded frames, the frames assembled then, when.
    private var decoded: Int?
    private var assembledAtProgress = 0
    private var progressMicros: Int64 = 0
    private var lastStuckRequestMicros: Int64?

    public init(intervalMicros: Int64 = KeyframeRequestPolicy.defaultInterval) {
        self.intervalMicros = intervalMicros
    }

    /// True when a PLI should leave now; it is then counted as sent.
    public mutating func shouldRequest(waitingForKeyframe: Bool, nowMicros: Int64) -> Bool {
        guard waitingForKeyframe else { return false }
        if let last = lastRequestMicros, nowMicros - last < intervalMicros { return false }
        lastRequestMicros = nowMicros
        return true
    }

    /// As above, and also true when the decoder is stuck: `framesDecoded` has not moved for
    /// `stuckAfter` while `framesAssembled` grew.
    public mutating func shouldRequest(
        waitingForKeyframe: Bool, framesAssembled: Int, framesDecoded: Int, nowMicros: Int64
    ) -> Bool {
        if decoded != framesDecoded {
            decoded = framesDecoded
            assembledAtProgress = framesAssembled
            progressMicros = nowMicros
            lastStuckRequestMicros = nil
        }
        if shouldRequest(waitingForKeyframe: waitingForKeyframe, nowMicros: nowMicros) { return true }
        let stuck = framesAssembled > assembledAtProgress && nowMicros - progressMicros >= Self.stuckAfter
        guard stuck else { return false }
        if let last = lastStuckRequestMicros, nowMicros - last < Self.stuckAfter { return false }
        lastStuckRequestMicros = nowMicros
        lastRequestMicros = nowMicros
        return true
    }
}
