import ScreenCapture
import ShareCore

/// The screen source as the watchdog sees it: it counts the frames the capture delivers, restarts
/// the capture on the same content when told, and can be made to stall (fault injection for
/// drills and tests, off unless asked for): frames stop reaching the encoder, as from a capture
/// that hangs, until the next restart.
public final class SupervisedSource: VideoFrameSource, FrameCountingSource {
    private struct State {
        var deliver: (@Sendable (VideoFrame) -> Void)?
        var stalled = false
        var delivered = 0
        var restarts = 0
    }

    public let inner: any VideoFrameSource
    private let state = Locked(State())

    public init(_ inner: any VideoFrameSource) {
        self.inner = inner
    }

    public func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        state.withLock { $0.deliver = deliver }
        inner.start { [weak self] frame in self?.forward(frame) }
    }

    public func stop() {
        inner.stop()
        state.withLock { $0.deliver = nil }
    }

    private func forward(_ frame: VideoFrame) {
        let deliver = state.withLock { s -> (@Sendable (VideoFrame) -> Void)? in
            guard !s.stalled, let deliver = s.deliver else { return nil }
            s.delivered += 1
            return deliver
        }
        deliver?(frame)
    }

    /// Starts the capture again on the same content (no picker); clears a stall. The synthetic
    /// screen is stopped and started; a portal or PipeWire capture keeps its session (it restarts
    /// its own stream when it falls silent), so here only the path to the encoder is cleared.
    public func restart() {
        guard let deliver = state.withLock({ $0.deliver }) else { return }
        state.withLock {
            $0.stalled = false; $0.restarts += 1
        }
        if inner is SyntheticScreenSource {
            inner.stop()
            start(deliver: deliver)
        }
    }

    public func injectStall() { state.withLock { $0.stalled = true } }

    /// Frames that reached the encoder's queue.
    public var frameCount: Int { state.withLock { $0.delivered } }
    public var restarts: Int { state.withLock { $0.restarts } }
}
