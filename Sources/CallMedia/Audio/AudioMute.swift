import Synchronization

/// The microphone's mute switch (`mute` / `unmute` typed while a call runs): while it is on, every
/// audio send thread sends Opus-encoded digital silence in place of what it captures. The stream,
/// its numbering and the meter of what is captured go on, so unmuting is instant and nobody's
/// path to us has to be made again. One switch for the process (a person has one microphone);
/// tests make their own.
public final class AudioMute: Sendable {
    public static let shared = AudioMute()

    private let muted = Atomic<Bool>(false)

    public init() {}

    public var isMuted: Bool { muted.load(ordering: .acquiring) }

    /// Sets the switch; true when that changed it.
    @discardableResult
    public func set(_ on: Bool) -> Bool {
        muted.exchange(on, ordering: .acquiringAndReleasing) != on
    }
}
