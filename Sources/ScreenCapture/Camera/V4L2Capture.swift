#if canImport(Glibc)
    import Glibc
#endif
import Foundation
internal import CShareV4L2
import ShareCore
import Synchronization

/// The memory-mapped buffers of one streaming device; unmapped in deinit.
final class V4L2Buffers {
    var regions: [(pointer: UnsafeMutableRawPointer, length: Int)] = []

    deinit {
        for region in regions { munmap(region.pointer, region.length) }
    }
}

@available(*, unavailable)
extension V4L2Buffers: Sendable {}

/// A V4L2 camera streaming through memory-mapped buffers. The initializer opens the device, sets
/// the format and rate, maps four buffers and starts streaming (blocking: run it on a thread of its
/// own); then a poll thread dequeues each frame, copies it into a `VideoFrame` (YUYV and NV12 as
/// they come, MJPEG decoded with libavcodec to I420), hands it to `deliver` and queues the buffer
/// again. ENODEV, POLLERR and POLLHUP end the stream as a dead or unplugged camera.
public final class V4L2Capture: CameraStream, @unchecked Sendable {
    // @unchecked: `handle` and `buffers` are touched by the poll thread only once it has started,
    // and by deinit after `stop()` joined it; everything else is immutable or atomic.
    public let format: CameraFormat
    public let path: String
    private let handle: V4L2Handle
    private let buffers = V4L2Buffers()
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let bytesPerLine: Int

    init(
        path: String, format requested: CameraFormat, deliver: @escaping @Sendable (VideoFrame) -> Void,
        ended: @escaping @Sendable (CameraEnd) -> Void
    ) throws(CameraError) {
        self.path = path
        let handle = try V4L2Handle(path: path)
        self.handle = handle
        let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        func fail(_ what: String, _ code: Int32) -> CameraError {
            CameraError("camera: \(path) refused \(what) (\(String(cString: strerror(code))))")
        }

        var fmt = v4l2_format()
        fmt.type = captureType
        fmt.fmt.pix.width = UInt32(requested.width)
        fmt.fmt.pix.height = UInt32(requested.height)
        fmt.fmt.pix.pixelformat = requested.pixel.fourcc
        fmt.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        var code = handle.call { CShareV4L2_s_fmt($0, &fmt) }
        guard code == 0 else { throw fail("the format \(requested)", code) }
        guard fmt.fmt.pix.pixelformat == requested.pixel.fourcc else {
            throw CameraError("camera: \(path) would not send \(requested.pixel.rawValue)")
        }
        var parm = v4l2_streamparm()
        parm.type = captureType
        parm.parm.capture.timeperframe.numerator = requested.interval.numerator
        parm.parm.capture.timeperframe.denominator = requested.interval.denominator
        var interval = requested.interval
        if handle.call({ CShareV4L2_s_parm($0, &parm) }) == 0, parm.parm.capture.timeperframe.denominator > 0 {
            interval = FrameInterval(
                numerator: parm.parm.capture.timeperframe.numerator,
                denominator: parm.parm.capture.timeperframe.denominator)
        }
        format = CameraFormat(
            pixel: requested.pixel, width: Int(fmt.fmt.pix.width), height: Int(fmt.fmt.pix.height),
            interval: interval)
        bytesPerLine = Int(fmt.fmt.pix.bytesperline)

        var request = v4l2_requestbuffers()
        request.count = 4
        request.type = captureType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        code = handle.call { CShareV4L2_reqbufs($0, &request) }
        guard code == 0, request.count > 0 else { throw fail("memory-mapped buffers", code) }
        for index in 0..<request.count {
            var buffer = v4l2_buffer()
            buffer.type = captureType
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            buffer.index = index
            code = handle.call { CShareV4L2_querybuf($0, &buffer) }
            guard code == 0 else { throw fail("buffer \(index)", code) }
            let mapped = mmap(
                nil, Int(buffer.length), PROT_READ | PROT_WRITE, MAP_SHARED, handle.fd, off_t(buffer.m.offset))
            guard let mapped, mapped != MAP_FAILED else { throw fail("mapping buffer \(index)", errno) }
            buffers.regions.append((mapped, Int(buffer.length)))
            code = handle.call { CShareV4L2_qbuf($0, &buffer) }
            guard code == 0 else { throw fail("queueing buffer \(index)", code) }
        }
        code = handle.call { CShareV4L2_streamon($0, Int32(captureType)) }
        guard code == 0 else { throw fail("starting the stream", code) }

        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            let end = pollLoop(deliver: deliver)
            _ = self.handle.call { CShareV4L2_streamoff($0, Int32(captureType)) }
            finished.signal()
            if let end { ended(end) }
        }
        thread.name = "v4l2-\(path.split(separator: "/").last ?? "")"
        thread.start()
    }

    /// Runs until `stop()` or the device ends; returns why it ended on its own.
    private func pollLoop(deliver: @Sendable (VideoFrame) -> Void) -> CameraEnd? {
        var decoder: MJPEGDecoder?
        var sequence: UInt64 = 0
        while running.load(ordering: .acquiring) {
            var descriptor = pollfd(fd: handle.fd, events: Int16(POLLIN | POLLPRI), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed("poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 { continue }
            if descriptor.revents & Int16(POLLERR | POLLHUP) != 0 {
                let which = descriptor.revents & Int16(POLLHUP) != 0 ? "POLLHUP" : "POLLERR"
                return .disconnected(which)
            }
            var buffer = v4l2_buffer()
            buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            let code = handle.call { CShareV4L2_dqbuf($0, &buffer) }
            if code == EAGAIN { continue }
            if code == ENODEV { return .disconnected("ENODEV") }
            if code != 0 { return .failed("dequeue: \(String(cString: strerror(code)))") }
            let captured = Clocks.monotonicMicros()
            let region = buffers.regions[Int(buffer.index)]
            let used = min(Int(buffer.bytesused), region.length)
            let bytes = UnsafeRawBufferPointer(start: region.pointer, count: used)
            let frame: VideoFrame?
            if buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 {
                frame = nil
            } else {
                switch format.pixel {
                case .yuyv, .nv12:
                    frame = Self.rawFrame(
                        bytes, format: format, bytesPerLine: bytesPerLine, captured: captured, sequence: sequence)
                case .mjpeg:
                    if decoder == nil { decoder = try? MJPEGDecoder() }
                    frame = try? decoder?.decode(bytes, captureMicros: captured)
                }
            }
            var requeue = buffer
            let again = handle.call { CShareV4L2_qbuf($0, &requeue) }
            if var frame {
                frame.sequence = sequence
                sequence += 1
                deliver(frame)
            }
            if again == ENODEV { return .disconnected("ENODEV") }
            if again != 0 { return .failed("requeue: \(String(cString: strerror(again)))") }
        }
        return nil
    }

    /// YUYV or NV12 bytes as a frame, or nil when the buffer is shorter than the picture.
    static func rawFrame(
        _ bytes: UnsafeRawBufferPointer, format: CameraFormat, bytesPerLine: Int, captured: Int64,
        sequence: UInt64
    ) -> VideoFrame? {
        let w = format.width, h = format.height
        switch format.pixel {
        case .yuyv:
            let stride = max(bytesPerLine, w * 2)
            guard bytes.count >= stride * (h - 1) + w * 2 else { return nil }
            return VideoFrame(
                format: .yuyv, width: w, height: h,
                planes: [Plane(bytes: Array(bytes.prefix(stride * h)), stride: stride)],
                captureMicros: captured, sequence: sequence)
        case .nv12:
            let stride = max(bytesPerLine, w)
            let lumaBytes = stride * h, chromaBytes = stride * ((h + 1) / 2)
            guard bytes.count >= lumaBytes + chromaBytes else { return nil }
            return VideoFrame(
                format: .nv12, width: w, height: h,
                planes: [
                    Plane(bytes: Array(bytes[0..<lumaBytes]), stride: stride),
                    Plane(bytes: Array(bytes[lumaBytes..<(lumaBytes + chromaBytes)]), stride: stride)
                ], captureMicros: captured, sequence: sequence)
        case .mjpeg:
            return nil
        }
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    deinit { stop() }
}
