/// The pixel layouts a camera may send that sharectl reads.
public enum CameraPixelFormat: String, Sendable, Hashable, CaseIterable {
    case yuyv = "YUYV", nv12 = "NV12", mjpeg = "MJPG"

    /// V4L2's four-character code (`v4l2_fourcc`).
    public var fourcc: UInt32 {
        let b = Array(rawValue.utf8)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    public init?(fourcc: UInt32) {
        guard let found = Self.allCases.first(where: { $0.fourcc == fourcc }) else { return nil }
        self = found
    }
}

/// One frame rate as V4L2 states it: the interval between frames, `numerator/denominator` seconds.
public struct FrameInterval: Sendable, Hashable, CustomStringConvertible {
    public var numerator: UInt32
    public var denominator: UInt32

    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = max(1, numerator)
        self.denominator = max(1, denominator)
    }

    public init(fps: UInt32) { self.init(numerator: 1, denominator: fps) }

    public var framesPerSecond: Double { Double(denominator) / Double(numerator) }

    public var description: String {
        let fps = framesPerSecond
        if fps == fps.rounded() { return "\(Int(fps)) fps" }
        let hundredths = Int((fps * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) fps"
    }
}

/// A size and pixel layout a camera offers, with every frame rate it really supports at that size.
public struct CameraFormatOption: Sendable, Hashable {
    public var pixel: CameraPixelFormat
    public var width: Int
    public var height: Int
    public var intervals: [FrameInterval]

    public init(pixel: CameraPixelFormat, width: Int, height: Int, intervals: [FrameInterval]) {
        self.pixel = pixel
        self.width = width
        self.height = height
        self.intervals = intervals
    }
}

/// What a camera is asked to send: one size, layout and rate.
public struct CameraFormat: Sendable, Hashable, CustomStringConvertible {
    public var pixel: CameraPixelFormat
    public var width: Int
    public var height: Int
    public var interval: FrameInterval

    public init(pixel: CameraPixelFormat, width: Int, height: Int, interval: FrameInterval) {
        self.pixel = pixel
        self.width = width
        self.height = height
        self.interval = interval
    }

    /// "640×480 YUYV at 30 fps".
    public var description: String { "\(width)×\(height) \(pixel.rawValue) at \(interval)" }
}

/// The format rule: the width nearest 640, then the frame rate nearest 30 fps without going over
/// (the slowest rate above 30 only when the size has none at or below it), always a rate the
/// camera listed for that size. Among equals, uncompressed layouts come first (YUYV, NV12, then
/// MJPEG, which costs a decode), then the height nearest 480. The result is the order in which
/// the director tries a camera's formats: the first is the choice, the rest are "its next format".
public enum CameraFormatRule {
    public static let targetWidth = 640
    public static let targetFramesPerSecond = 30.0

    /// The rate chosen among the ones listed, or nil when none is listed.
    public static func rate(from intervals: [FrameInterval]) -> FrameInterval? {
        let atOrBelow = intervals.filter { $0.framesPerSecond <= targetFramesPerSecond + 0.001 }
        if let best = atOrBelow.max(by: { $0.framesPerSecond < $1.framesPerSecond }) { return best }
        return intervals.min(by: { $0.framesPerSecond < $1.framesPerSecond })
    }

    public static func ranked(_ options: [CameraFormatOption]) -> [CameraFormat] {
        let candidates: [(format: CameraFormat, over: Bool)] = options.compactMap { option in
            guard option.width > 0, option.height > 0, let interval = rate(from: option.intervals) else { return nil }
            return (
                CameraFormat(pixel: option.pixel, width: option.width, height: option.height, interval: interval),
                interval.framesPerSecond > targetFramesPerSecond + 0.001
            )
        }
        let order = CameraPixelFormat.allCases
        let sorted = candidates.sorted { a, b in
            let wa = abs(a.format.width - targetWidth), wb = abs(b.format.width - targetWidth)
            if wa != wb { return wa < wb }
            if a.over != b.over { return !a.over }
            let fa = a.format.interval.framesPerSecond, fb = b.format.interval.framesPerSecond
            if fa != fb { return a.over ? fa < fb : fa > fb }
            let pa = order.firstIndex(of: a.format.pixel)!, pb = order.firstIndex(of: b.format.pixel)!
            if pa != pb { return pa < pb }
            return abs(a.format.height - 480) < abs(b.format.height - 480)
        }
        var seen = Set<CameraFormat>()
        return sorted.map(\.format).filter { seen.insert($0).inserted }
    }
}
