import ShareCore

extension SyntheticScreenSource: VideoFrameSource, FrameCountingSource {}
extension ScreenCaptureSource: VideoFrameSource, FrameCountingSource {}
