/// Says when what we send is silent (DESIGN.md "Audio"): every frame sent under −90 dBFS for 5 s
/// means "Your microphone isn't picking anything up"; one frame at or above −90 dBFS clears it.
/// A pure value on a caller's clock.
public struct SilenceMonitor: Sendable {
    public static let message = "Your microphone isn't picking anything up"
    public static let thresholdDbfs = -90.0
    public static var window: Duration { .seconds(5) }

    public enum Change: Sendable, Equatable { case becameSilent, heardAgain }

    private var quietSince: ContinuousClock.Instant?
    public private(set) var isSilent = false

    public init() {}

    /// One frame sent at `levelDbfs`; returns a change when the verdict flips.
    public mutating func sent(levelDbfs: Double, now: ContinuousClock.Instant) -> Change? {
        guard levelDbfs < Self.thresholdDbfs else {
            quietSince = nil
            guard isSilent else { return nil }
            isSilent = false
            return .heardAgain
        }
        let since = quietSince ?? now
        quietSince = since
        guard !isSilent, now - since >= Self.window else { return nil }
        isSilent = true
        return .becameSilent
    }
}
