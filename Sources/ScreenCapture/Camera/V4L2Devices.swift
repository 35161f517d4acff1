#if canImport(Glibc)
    import Glibc
#endif
import Foundation
internal import CShareV4L2
import ShareCore

/// An open V4L2 device node; closed when the last reference goes. Confined to one thread at a time.
final class V4L2Handle {
    let fd: Int32
    let path: String

    init(path: String) throws(CameraError) {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw CameraError("camera: cannot open \(path): \(String(cString: strerror(errno)))") }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Retries an ioctl interrupted by a signal; returns 0 or errno.
    func call(_ body: (Int32) -> Int32) -> Int32 {
        while true {
            if body(fd) == 0 { return 0 }
            if errno != EINTR { return errno }
        }
    }
}

@available(*, unavailable)
extension V4L2Handle: Sendable {}

/// Reads a NUL-terminated C char array imported as a tuple.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The V4L2 cameras on this machine: every /dev/videoN whose device can capture video, with its
/// formats, sizes and frame rates as the driver lists them.
public struct V4L2Cameras: CameraProvider {
    public let deviceDirectory: String

    public init(deviceDirectory: String = "/dev") { self.deviceDirectory = deviceDirectory }

    /// The device nodes that look like video devices, in number order.
    public func nodes() -> [String] {
        // readdir itself: Foundation's listing gives up on the whole directory when one entry
        // vanishes while it reads (as a node does during an unplug).
        var names: [String] = []
        if let directory = opendir(deviceDirectory) {
            while let entry = readdir(directory) {
                names.append(
                    withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                    })
            }
            closedir(directory)
        }
        return names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { "\(deviceDirectory)/\($0)" }
    }

    public func cameras() -> [CameraInfo] {
        survey().compactMap { try? $0.result.get() }
    }

    /// Every video node with what it is, or why it is not a camera sharectl can use.
    public func survey() -> [(path: String, result: Result<CameraInfo, CameraError>)] {
        nodes().map { path in (path, Result { () throws(CameraError) in try Self.describe(path: path) }) }
    }

    /// One device node's capabilities and formats; an error when it is not a capture device.
    public static func describe(path: String) throws(CameraError) -> CameraInfo {
        let handle = try V4L2Handle(path: path)
        var cap = v4l2_capability()
        let failed = handle.call { CShareV4L2_querycap($0, &cap) }
        guard failed == 0 else {
            throw CameraError("camera: \(path) is not a V4L2 device (\(String(cString: strerror(failed))))")
        }
        let caps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        guard caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0, caps & UInt32(V4L2_CAP_STREAMING) != 0 else {
            throw CameraError("camera: \(path) does not capture video by streaming")
        }
        let card = cString(cap.card), bus = cString(cap.bus_info), driver = cString(cap.driver)
        let options = Self.options(handle)
        // A card named only after its driver ("vivid") says nothing; its bus tells two apart.
        let name =
            card == driver || card.isEmpty
            ? "\(card.isEmpty ? driver : card) (\(bus.hasPrefix("platform:") ? String(bus.dropFirst(9)) : bus))" : card
        let words: [(Int32, String)] = [
            (V4L2_CAP_VIDEO_CAPTURE, "video capture"), (V4L2_CAP_VIDEO_CAPTURE_MPLANE, "multi-planar capture"),
            (V4L2_CAP_STREAMING, "streaming"), (V4L2_CAP_READWRITE, "read/write"),
            (V4L2_CAP_META_CAPTURE, "metadata"), (V4L2_CAP_EXT_PIX_FORMAT, "extended formats")
        ]
        let capabilities = words.filter { caps & UInt32(bitPattern: $0.0) != 0 }.map(\.1)
        return CameraInfo(
            id: "v4l2:\(bus)/\(card)", name: name, path: path, driver: driver,
            formats: CameraFormatRule.ranked(options), options: options, capabilities: capabilities)
    }

    /// Every (layout, size) the device lists with its frame rates; layouts sharectl cannot read are left out.
    static func options(_ handle: V4L2Handle) -> [CameraFormatOption] {
        var result: [CameraFormatOption] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            guard handle.call({ CShareV4L2_enum_fmt($0, &desc) }) == 0 else { break }
            index += 1
            guard let pixel = CameraPixelFormat(fourcc: desc.pixelformat) else { continue }
            for (width, height) in sizes(handle, fourcc: desc.pixelformat) {
                let intervals = Self.intervals(handle, fourcc: desc.pixelformat, width: width, height: height)
                result.append(CameraFormatOption(pixel: pixel, width: width, height: height, intervals: intervals))
            }
        }
        return result
    }

    static func sizes(_ handle: V4L2Handle, fourcc: UInt32) -> [(Int, Int)] {
        var sizes: [(Int, Int)] = []
        var index: UInt32 = 0
        while sizes.count < 64 {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourcc
            guard handle.call({ CShareV4L2_enum_framesizes($0, &size) }) == 0 else { break }
            index += 1
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append((Int(size.discrete.width), Int(size.discrete.height)))
            } else {
                // Stepwise or continuous: the width nearest 640 the steps allow, at the largest
                // size's shape; and the largest size itself.
                let s = size.stepwise
                let step = Int(max(1, s.step_width)), minW = Int(s.min_width), maxW = Int(s.max_width)
                let width = min(
                    maxW, max(minW, minW + ((CameraFormatRule.targetWidth - minW + step / 2) / step) * step))
                let hStep = Int(max(1, s.step_height))
                var height = width * Int(s.max_height) / max(1, maxW)
                height = min(
                    Int(s.max_height),
                    max(Int(s.min_height), Int(s.min_height) + ((height - Int(s.min_height)) / hStep) * hStep))
                sizes.append((width, height))
                if width != maxW { sizes.append((maxW, Int(s.max_height))) }
                break
            }
        }
        return sizes
    }

    static func intervals(_ handle: V4L2Handle, fourcc: UInt32, width: Int, height: Int) -> [FrameInterval] {
        var intervals: [FrameInterval] = []
        var index: UInt32 = 0
        while intervals.count < 64 {
            var ival = v4l2_frmivalenum()
            ival.index = index
            ival.pixel_format = fourcc
            ival.width = UInt32(width)
            ival.height = UInt32(height)
            guard handle.call({ CShareV4L2_enum_frameintervals($0, &ival) }) == 0 else { break }
            index += 1
            if ival.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                intervals.append(
                    FrameInterval(numerator: ival.discrete.numerator, denominator: ival.discrete.denominator))
            } else {
                // A range: its two ends, and 30 fps when the range holds it.
                let s = ival.stepwise
                let fastest = FrameInterval(numerator: s.min.numerator, denominator: s.min.denominator)
                let slowest = FrameInterval(numerator: s.max.numerator, denominator: s.max.denominator)
                intervals += [fastest, slowest]
                let thirty = FrameInterval(fps: 30)
                if thirty.framesPerSecond <= fastest.framesPerSecond, thirty.framesPerSecond >= slowest.framesPerSecond
                {
                    intervals.append(thirty)
                }
                break
            }
        }
        // A driver that lists no rates still streams at its own: ask for nothing in particular.
        return intervals.isEmpty ? [FrameInterval(fps: 30)] : intervals
    }

    public func open(
        _ camera: CameraInfo, format: CameraFormat, deliver: @escaping @Sendable (VideoFrame) -> Void,
        ended: @escaping @Sendable (CameraEnd) -> Void
    ) throws(CameraError) -> any CameraStream {
        try V4L2Capture(path: camera.path, format: format, deliver: deliver, ended: ended)
    }
}
