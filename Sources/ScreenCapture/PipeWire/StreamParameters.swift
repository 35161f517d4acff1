internal import CSharePipeWire

extension PipeWireCapture {
    /// What the capture stream asks PipeWire for, each as a preferred value and a range: the
    /// picture size, the frame rate, the buffers in the stream's pool and the room for a cursor
    /// bitmap. The producer picks within the ranges. These are the only place the choices are
    /// made: the C shim writes them into its pods as given.
    public struct StreamParameters: Sendable, Hashable {
        /// Picture size in pixels.
        public var width = 1920, height = 1080
        public var minWidth = 1, minHeight = 1
        public var maxWidth = 8192, maxHeight = 8192
        /// Frames per second (a minimum of 0: no lower bound).
        public var framesPerSecond = 30, minFramesPerSecond = 0, maxFramesPerSecond = 144
        /// Buffers in the stream's pool.
        public var buffers = 8, minBuffers = 1, maxBuffers = 32
        /// Room asked for the cursor bitmap, in pixels a side; a larger bitmap is not drawn.
        public var cursorSide = 64, maxCursorSide = 256

        public init() {}
    }
}

extension PipeWireCapture.StreamParameters {
    /// The parameters as the shim takes them.
    var shim: CSharePipeWire_capture_params {
        func u(_ value: Int) -> UInt32 { UInt32(clamping: value) }
        return CSharePipeWire_capture_params(
            width: u(width), height: u(height), min_width: u(minWidth), min_height: u(minHeight),
            max_width: u(maxWidth), max_height: u(maxHeight),
            fps: u(framesPerSecond), min_fps: u(minFramesPerSecond), max_fps: u(maxFramesPerSecond),
            buffers: u(buffers), min_buffers: u(minBuffers), max_buffers: u(maxBuffers),
            cursor_side: u(cursorSide), max_cursor_side: u(maxCursorSide))
    }
}
