/// The converted pictures of one captured frame, shared by every encoder it is handed to: a
/// screen sent as three simulcast layers, or to several connections, is converted to I420 once,
/// and each size it is scaled to is made once, by whichever encoder's thread asks first (the
/// others wait for it rather than do the same work).
///
/// The fan-outs attach one to each frame (`VideoFrame.sharingConversions()`); the pictures go
/// with the last copy of the frame. Thread-safe: one lock for the table, one for each size, so a
/// size being made holds back only those that want that size.
public final class FrameConversions: Sendable {
    private struct Size: Hashable {
        var width: Int
        var height: Int
    }

    private final class Slot: Sendable {
        let picture = Locked<VideoFrame?>(nil)
    }

    private let slots = Locked<[Size: Slot]>([:])
    private let made = Locked(0)

    public init() {}

    /// The picture of `width` × `height`: made by `make` the first time, the same one after.
    public func picture<E: Error>(
        width: Int, height: Int, make: () throws(E) -> VideoFrame
    ) throws(E) -> VideoFrame {
        let slot = slots.withLock { table in
            if let slot = table[Size(width: width, height: height)] { return slot }
            let slot = Slot()
            table[Size(width: width, height: height)] = slot
            return slot
        }
        return try slot.picture.withLock { (picture: inout VideoFrame?) throws(E) -> VideoFrame in
            if let picture { return picture }
            var new = try make()
            new.conversions = nil
            picture = new
            made.withLock { $0 += 1 }
            return new
        }
    }

    /// How many pictures were made (each size once), for tests.
    public var picturesMade: Int { made.withLock { $0 } }
}

extension VideoFrame {
    /// This frame with a `FrameConversions` of its own, unless it already has one: what a fan-out
    /// hands to several encoders.
    public func sharingConversions() -> VideoFrame {
        guard conversions == nil else { return self }
        var shared = self
        shared.conversions = FrameConversions()
        return shared
    }
}
