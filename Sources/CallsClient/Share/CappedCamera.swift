import ShareCore
import VideoSend
import CallMedia

/// A camera on its way to one connection's camera section, under the send-policy rule (DESIGN.md
/// "Send policies"): while a screen is shared beside it, at most 500 kbit/s and 360 lines
/// (`CameraCap`); its own defaults otherwise. The lines are judged from the frames themselves,
/// so the cap holds from the first frame and across a switch to a camera of another shape: new
/// limits reach the encoder (`PeerConnection.setVideoLimits`) before the frame that needs them.
/// Nothing renegotiates.
///
/// Thread-safe: frames pass on the camera's capture thread; `setBesideScreen` comes from the
/// session's actor.
public final class CappedCamera: VideoFrameSource, FrameCountingSource {
    /// The camera's own limits when no screen is beside it.
    public struct Defaults: Sendable, Equatable {
        public var bitrate: Int
        public var longSide: Int

        public init(bitrate: Int = CameraCap.defaultBitrate, longSide: Int = CameraCap.defaultLongSide) {
            self.bitrate = bitrate
            self.longSide = longSide
        }
    }

    private struct State {
        var besideScreen: Bool
        var width = 0
        var height = 0
        var applied: (maxBitrate: Int, maxLongSide: Int)?
        var frames = 0
    }

    public let defaults: Defaults
    private let source: any VideoFrameSource
    private let connection: PeerConnection
    private let transceiver: Transceiver
    private let state: Locked<State>

    /// `transceiver` is the camera section of `connection` this source is attached to.
    public init(
        _ source: any VideoFrameSource, connection: PeerConnection, transceiver: Transceiver, defaults: Defaults,
        besideScreen: Bool
    ) {
        self.source = source
        self.connection = connection
        self.transceiver = transceiver
        self.defaults = defaults
        state = Locked(State(besideScreen: besideScreen))
    }

    /// True while the camera is capped for a screen beside it.
    public var besideScreen: Bool { state.withLock { $0.besideScreen } }
    public var frameCount: Int { state.withLock { $0.frames } }

    /// A screen share started (true) or stopped (false) beside the camera: its limits change now.
    public func setBesideScreen(_ on: Bool) {
        let change = state.withLock { s -> (Int, Int)? in
            s.besideScreen = on
            return Self.change(&s, defaults: defaults)
        }
        if let (bitrate, longSide) = change { apply(bitrate, longSide) }
    }

    public func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        state.withLock { $0.applied = nil }  // a fresh encoder may be behind this start
        source.start { [self] frame in
            let change = state.withLock { s -> (Int, Int)? in
                s.frames += 1
                guard frame.width != s.width || frame.height != s.height || s.applied == nil else { return nil }
                (s.width, s.height) = (frame.width, frame.height)
                return Self.change(&s, defaults: defaults)
            }
            if let (bitrate, longSide) = change { apply(bitrate, longSide) }
            deliver(frame)
        }
    }

    public func stop() { source.stop() }

    /// The limits to apply when they differ from the ones applied last.
    private static func change(_ s: inout State, defaults: Defaults) -> (Int, Int)? {
        let limits = CameraCap.limits(
            besideScreen: s.besideScreen, width: s.width, height: s.height,
            defaultBitrate: defaults.bitrate, defaultLongSide: defaults.longSide)
        guard s.applied.map({ $0 != limits }) ?? true else { return nil }
        s.applied = limits
        return limits
    }

    private func apply(_ bitrate: Int, _ longSide: Int) {
        connection.setVideoLimits(maxBitrate: bitrate, maxLongSide: longSide, on: transceiver)
    }
}
