import ScreenCapture
import ScreenWatchdog
import ShareCore

/// Something that produces video frames on a thread of its own once started (the synthetic screen,
/// later the portal stream or a camera). `deliver` must be cheap: the peer connection pushes into
/// its encoder's `FrameQueue` there. `stop()` returns when no more frames will arrive.
public protocol VideoFrameSource: Sendable {
    func start(deliver: @escaping @Sendable (VideoFrame) -> Void)
    func stop()
}

extension SyntheticScreenSource: VideoFrameSource {}

/// A source that counts the frames it handed on (shown as frames captured).
public protocol FrameCountingSource: Sendable {
    var frameCount: Int { get }
}

extension SyntheticScreenSource: FrameCountingSource {}
extension ScreenCaptureSource: VideoFrameSource, FrameCountingSource {}

/// The camera director's output: frames from whichever camera is current, one track throughout.
extension CameraFeed: VideoFrameSource {}
