/// Pixel layouts that flow through the pipeline. Packed RGB formats are named in memory byte
/// order (`bgrx`: B, G, R, X per pixel — PipeWire's BGRx and libyuv's "ARGB").
public enum PixelFormat: String, Sendable, Hashable, CaseIterable {
    case i420, nv12, yuyv, bgrx, bgra, rgbx, rgba

    /// Planes this format has.
    public var planeCount: Int {
        switch self {
        case .i420: 3
        case .nv12: 2
        case .yuyv, .bgrx, .bgra, .rgbx, .rgba: 1
        }
    }
}

/// One plane of pixels: rows of `stride` bytes, of which the first `width × bytesPerPixel` count.
public struct Plane: Sendable, Hashable {
    public var bytes: [UInt8]
    public var stride: Int

    public init(bytes: [UInt8], stride: Int) {
        self.bytes = bytes
        self.stride = stride
    }
}

/// A picture with the facts the pipeline needs about it. Values, so a frame handed to another
/// thread cannot change under it.
public struct VideoFrame: Sendable {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    public var planes: [Plane]
    /// Capture time on the monotonic clock, in microseconds from an arbitrary origin.
    public var captureMicros: Int64
    /// The source's own frame counter.
    public var sequence: UInt64
    /// Its converted pictures, shared by the encoders it is handed to (set by the fan-outs).
    public var conversions: FrameConversions?

    public init(
        format: PixelFormat, width: Int, height: Int, planes: [Plane], captureMicros: Int64 = 0,
        sequence: UInt64 = 0
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.captureMicros = captureMicros
        self.sequence = sequence
    }

    /// A black I420 frame (Y 16, U and V 128: video range), tightly packed.
    public static func blackI420(width: Int, height: Int) -> VideoFrame {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        return VideoFrame(
            format: .i420, width: width, height: height,
            planes: [
                Plane(bytes: [UInt8](repeating: 16, count: width * height), stride: width),
                Plane(bytes: [UInt8](repeating: 128, count: cw * ch), stride: cw),
                Plane(bytes: [UInt8](repeating: 128, count: cw * ch), stride: cw)
            ])
    }
}
