import ShareCore

/// The camera director's output: frames from whichever camera is current, one track throughout.
extension CameraFeed: VideoFrameSource {}
