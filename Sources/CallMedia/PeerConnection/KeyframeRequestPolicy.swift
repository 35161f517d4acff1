/// When a video receiver asks its sender for a keyframe with a PLI (RFC 4585 §6.3.1): while it
/// waits for one (nothing decodable has arrived yet, or a frame was dropped since the last
/// keyframe), at most once per `interval`. A pure state machine: the caller passes `now`.
public struct KeyframeRequestPolicy: Sendable, Equatable {
    public static let defaultInterval: Int64 = 300_000
    public let intervalMicros: Int64
    private var lastRequestMicros: Int64?

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
}
