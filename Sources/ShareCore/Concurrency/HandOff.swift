/// Moves a value that is not `Sendable` (an encoder, a decoder: anything confined to one thread)
/// to the one thread that will own it from then on. The value goes in with `sending`, so the
/// giver keeps no reference the compiler knows of; it comes out once, with `take()`:
///
/// ```swift
/// let handOff = HandOff(try OpusAudioEncoder(channels: 2, bitrate: 64_000))
/// let thread = Thread { run(handOff.take()!) }   // Thread's block is @Sendable
/// ```
///
/// Where a `sending` parameter reaches the owner directly, no box is needed; this is for the
/// `@Sendable` closures (`Thread`, `GLibLoop.invoke`) that cannot take one.
public final class HandOff<Value>: Sendable {
    private let slot: Locked<Value?>

    public init(_ value: consuming sending Value) {
        slot = Locked(Optional(value))
    }

    /// The value, the first time; nil after.
    public func take() -> sending Value? {
        slot.withLock { value -> sending Value? in
            let taken = value.take()
            return taken
        }
    }
}
