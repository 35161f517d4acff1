/// Something that produces video frames on a thread of its own once started (the synthetic screen,
/// the portal stream or a camera). `deliver` must be cheap: the peer connection pushes into
/// its encoder's `FrameQueue` there. `stop()` returns when no more frames will arrive.
public protocol VideoFrameSource: Sendable {
    func start(deliver: @escaping @Sendable (VideoFrame) -> Void)
    func stop()
}

/// A source that counts the frames it handed on (shown as frames captured).
public protocol FrameCountingSource: Sendable {
    var frameCount: Int { get }
}
