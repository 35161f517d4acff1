import Foundation
import ShareCore
internal import CAVCodec

/// H.264 through libavcodec, for the hardware encoders it wraps: VA-API (`h264_vaapi`: Intel and
/// AMD GPUs through a DRM render node) and NVENC (`h264_nvenc`: NVIDIA). One code path drives any
/// libavcodec H.264 encoder; with `.software` it drives libavcodec's own libx264 wrapper, which is
/// how the tests exercise it on machines without a GPU.
///
/// Set up as the x264 encoder is: constrained baseline, no B-frames, low-delay options, parameter
/// sets with every keyframe, Annex-B out. The bitrate changes on the fly where the encoder allows
/// (libx264, NVENC); VA-API takes a new encoder context for a new bitrate, with a keyframe. Not
/// thread-safe: one encoder belongs to one encoding thread.
public final class LibavH264Encoder {
    public enum Backend: String, Sendable, Hashable, CaseIterable {
        case vaapi = "h264_vaapi"
        case nvenc = "h264_nvenc"
        /// libavcodec's libx264 wrapper: the same code path, no device.
        case software = "libx264"

        public var implementation: String {
            switch self {
            case .vaapi: "VA-API"
            case .nvenc: "NVENC"
            case .software: "libavcodec libx264"
            }
        }
    }

    public struct Configuration: Hashable, Sendable {
        public var backend: Backend
        public var width: Int
        public var height: Int
        public var frameRate: Int
        public var bitrate: Int
        public var keyframeInterval: Int
        /// The DRM render node for VA-API.
        public var device: String

        public init(
            backend: Backend, width: Int, height: Int, frameRate: Int = 30, bitrate: Int = 1_000_000,
            keyframeInterval: Int = 300, device: String = "/dev/dri/renderD128"
        ) {
            self.backend = backend
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrate = bitrate
            self.keyframeInterval = keyframeInterval
            self.device = device
        }
    }

    public private(set) var configuration: Configuration
    private var context: UnsafeMutablePointer<AVCodecContext>
    private var frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    private var device: UnsafeMutablePointer<AVBufferRef>?
    private var nextFrameIndex: Int64 = 0
    private var keyframeRequested = false
    private var actualFrameRate: Int

    public init(_ configuration: Configuration) throws(EncoderError) {
        let c = configuration
        guard c.width > 0, c.height > 0, c.width % 2 == 0, c.height % 2 == 0 else {
            throw EncoderError(codec: c.backend.rawValue, "\(c.width)×\(c.height) is not a positive even size")
        }
        guard c.frameRate > 0, c.bitrate >= 1000, c.keyframeInterval > 0 else {
            throw EncoderError(codec: c.backend.rawValue, "frame rate, bitrate and keyframe interval must be positive")
        }
        var device: UnsafeMutablePointer<AVBufferRef>?
        if c.backend == .vaapi {
            let made = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, c.device, nil, 0)
            guard made >= 0, device != nil else {
                throw EncoderError(
                    codec: c.backend.rawValue, "the VA-API device \(c.device) did not open: \(Self.message(made))")
            }
        }
        let context: UnsafeMutablePointer<AVCodecContext>
        do {
            context = try Self.open(c, bitrate: c.bitrate, device: device)
        } catch {
            av_buffer_unref(&device)
            throw error
        }
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            var doomed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&doomed)
            av_buffer_unref(&device)
            throw EncoderError(codec: c.backend.rawValue, "out of memory")
        }
        self.configuration = c
        self.context = context
        self.frame = frame
        self.packet = packet
        self.device = device
        self.actualFrameRate = c.frameRate
    }

    deinit {
        var doomedContext: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&doomedContext)
        var doomedFrame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&doomedFrame)
        var doomedPacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&doomedPacket)
        av_buffer_unref(&device)
    }

    private static func open(
        _ c: Configuration, bitrate: Int,
        device: UnsafeMutablePointer<AVBufferRef>?
    ) throws(EncoderError) -> UnsafeMutablePointer<AVCodecContext> {
        guard let codec = avcodec_find_encoder_by_name(c.backend.rawValue) else {
            throw EncoderError(codec: c.backend.rawValue, "this libavcodec has no \(c.backend.rawValue) encoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw EncoderError(codec: c.backend.rawValue, "out of memory")
        }
        var doomed: UnsafeMutablePointer<AVCodecContext>? = context
        context.pointee.width = Int32(c.width)
        context.pointee.height = Int32(c.height)
        context.pointee.time_base = AVRational(num: 1, den: Int32(c.frameRate))
        context.pointee.framerate = AVRational(num: Int32(c.frameRate), den: 1)
        context.pointee.bit_rate = Int64(bitrate)
        context.pointee.rc_max_rate = Int64(bitrate)
        context.pointee.rc_buffer_size = Int32(clamping: bitrate / 2)
        context.pointee.gop_size = Int32(c.keyframeInterval)
        context.pointee.max_b_frames = 0
        context.pointee.profile = FF_PROFILE_H264_CONSTRAINED_BASELINE
        context.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
        let options: [(String, String)]
        switch c.backend {
        case .software:
            context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            options = [("preset", "veryfast"), ("tune", "zerolatency"), ("profile", "baseline"), ("forced-idr", "1")]
        case .nvenc:
            context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            options = [
                ("preset", "p1"), ("tune", "ull"), ("zerolatency", "1"), ("profile", "baseline"), ("rc", "cbr"),
                ("forced-idr", "1")
            ]
        case .vaapi:
            context.pointee.pix_fmt = AV_PIX_FMT_VAAPI
            options = [("rc_mode", "CBR")]
            guard let device, let framesRef = av_hwframe_ctx_alloc(device) else {
                avcodec_free_context(&doomed)
                throw EncoderError(codec: c.backend.rawValue, "no VA-API frames context")
            }
            framesRef.pointee.data.withMemoryRebound(to: AVHWFramesContext.self, capacity: 1) { frames in
                frames.pointee.format = AV_PIX_FMT_VAAPI
                frames.pointee.sw_format = AV_PIX_FMT_NV12
                frames.pointee.width = Int32(c.width)
                frames.pointee.height = Int32(c.height)
                frames.pointee.initial_pool_size = 4
            }
            var ref: UnsafeMutablePointer<AVBufferRef>? = framesRef
            let initialised = av_hwframe_ctx_init(framesRef)
            guard initialised >= 0 else {
                av_buffer_unref(&ref)
                avcodec_free_context(&doomed)
                throw EncoderError(codec: c.backend.rawValue, "VA-API frames refused: \(message(initialised))")
            }
            context.pointee.hw_frames_ctx = framesRef
        }
        for (name, value) in options {
            // An option the encoder does not know is not fatal; a value it refuses is.
            let result = av_opt_set(context.pointee.priv_data, name, value, 0)
            if result < 0 && result != -Int32(EINVAL) && !(result == Self.optionNotFound) {
                avcodec_free_context(&doomed)
                throw EncoderError(codec: c.backend.rawValue, "option \(name)=\(value) refused: \(message(result))")
            }
        }
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            avcodec_free_context(&doomed)
            throw EncoderError(codec: c.backend.rawValue, "avcodec_open2 failed: \(message(opened))")
        }
        return context
    }

    /// AVERROR_OPTION_NOT_FOUND, FFERRTAG(0xF8,'O','P','T').
    private static let optionNotFound: Int32 = -Int32(bitPattern: 0xF8 | (0x4F << 8) | (0x50 << 16) | (0x54 << 24))

    public func forceKeyframe() { keyframeRequested = true }

    public func setRate(bitrate: Int, frameRate: Int) throws(EncoderError) {
        guard bitrate >= 1000, frameRate >= 1 else {
            throw EncoderError(
                codec: configuration.backend.rawValue, "bitrate \(bitrate) or frame rate \(frameRate) too low")
        }
        let rate = min(frameRate, configuration.frameRate)
        guard bitrate != configuration.bitrate || rate != actualFrameRate else { return }
        // Bits per frame as at the true rate: the encoder counts frames at its nominal rate.
        let budget = bitrate * configuration.frameRate / rate
        switch configuration.backend {
        case .software, .nvenc:
            // Both wrappers compare these with what they run at before each frame and reconfigure.
            context.pointee.bit_rate = Int64(budget)
            context.pointee.rc_max_rate = Int64(budget)
            context.pointee.rc_buffer_size = Int32(clamping: budget / 2)
        case .vaapi:
            let fresh = try Self.open(configuration, bitrate: budget, device: device)
            var doomed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&doomed)
            context = fresh
            keyframeRequested = true
        }
        configuration.bitrate = bitrate
        actualFrameRate = rate
    }

    public func encode(_ picture: I420Frame, timestamp90kHz: Int64) throws(EncoderError) -> EncodedFrame? {
        let name = configuration.backend.rawValue
        guard picture.width == configuration.width, picture.height == configuration.height else {
            throw EncoderError(
                codec: name,
                "frame is \(picture.width)×\(picture.height), encoder is "
                    + "\(configuration.width)×\(configuration.height)")
        }
        av_frame_unref(frame)
        frame.pointee.width = Int32(picture.width)
        frame.pointee.height = Int32(picture.height)
        frame.pointee.format = configuration.backend == .vaapi ? AV_PIX_FMT_NV12.rawValue : AV_PIX_FMT_YUV420P.rawValue
        guard av_frame_get_buffer(frame, 0) >= 0 else { throw EncoderError(codec: name, "no frame buffer") }
        Self.copy(picture, into: frame, nv12: configuration.backend == .vaapi)
        var input = frame
        var upload: UnsafeMutablePointer<AVFrame>?
        defer { av_frame_free(&upload) }
        if configuration.backend == .vaapi {
            upload = av_frame_alloc()
            guard let upload, av_hwframe_get_buffer(context.pointee.hw_frames_ctx, upload, 0) >= 0,
                av_hwframe_transfer_data(upload, frame, 0) >= 0
            else {
                throw EncoderError(codec: name, "uploading the frame to the GPU failed")
            }
            input = upload
        }
        input.pointee.pts = nextFrameIndex
        input.pointee.pict_type = keyframeRequested ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        nextFrameIndex += 1
        keyframeRequested = false
        let sent = avcodec_send_frame(context, input)
        guard sent >= 0 else { throw EncoderError(codec: name, "avcodec_send_frame failed: \(Self.message(sent))") }
        var bytes: [UInt8] = []
        var isKeyframe = false
        while true {
            let received = avcodec_receive_packet(context, packet)
            if received == -Int32(EAGAIN) || received == Self.endOfFile { break }
            guard received >= 0 else {
                throw EncoderError(codec: name, "avcodec_receive_packet failed: \(Self.message(received))")
            }
            if let data = packet.pointee.data {
                bytes += UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))
            }
            if packet.pointee.flags & AV_PKT_FLAG_KEY != 0 { isKeyframe = true }
            av_packet_unref(packet)
        }
        guard !bytes.isEmpty else { return nil }
        return EncodedFrame(bytes: bytes, isKeyframe: isKeyframe, frameIndex: timestamp90kHz)
    }

    /// AVERROR_EOF, FFERRTAG('E','O','F',' ').
    private static let endOfFile: Int32 = -Int32(bitPattern: 0x45 | (0x4F << 8) | (0x46 << 16) | (0x20 << 24))

    private static func copy(_ picture: I420Frame, into frame: UnsafeMutablePointer<AVFrame>, nv12: Bool) {
        let w = picture.width, h = picture.height, cw = picture.chromaWidth, ch = (h + 1) / 2
        func rows(_ source: [UInt8], _ width: Int, _ height: Int, _ plane: Int) {
            guard
                let base = withUnsafePointer(
                    to: frame.pointee.data,
                    { $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { $0[plane] } })
            else { return }
            let stride = Int(
                withUnsafePointer(to: frame.pointee.linesize) {
                    $0.withMemoryRebound(to: Int32.self, capacity: 8) { $0[plane] }
                })
            source.withUnsafeBufferPointer { src in
                for row in 0..<height {
                    (base + row * stride).update(from: src.baseAddress! + row * width, count: width)
                }
            }
        }
        rows(picture.y, w, h, 0)
        if nv12 {
            var uv = [UInt8](repeating: 0, count: cw * 2 * ch)
            for i in 0..<(cw * ch) { uv[2 * i] = picture.u[i]; uv[2 * i + 1] = picture.v[i] }
            rows(uv, cw * 2, ch, 1)
        } else {
            rows(picture.u, cw, ch, 1)
            rows(picture.v, cw, ch, 2)
        }
    }

    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

@available(*, unavailable) extension LibavH264Encoder: Sendable {}

extension LibavH264Encoder: VideoEncoder {
    public var codec: VideoCodec { .h264 }
    public var implementation: String { configuration.backend.implementation }
    public var width: Int { configuration.width }
    public var height: Int { configuration.height }
    public var bitrate: Int { configuration.bitrate }
}

/// Which hardware H.264 encoders this machine can use, and why not where it cannot.
public enum HardwareEncoders {
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        public var backend: LibavH264Encoder.Backend
        public var usable: Bool
        public var reason: String
        public var description: String { "\(backend.implementation): \(usable ? "usable" : reason)" }
    }

    /// Looks for each backend's device and encoder, and opens a small encoder where both exist.
    public static func probe(devices: String = "/dev") -> [Finding] {
        [LibavH264Encoder.Backend.vaapi, .nvenc].map { backend -> Finding in
            let hasEncoder = avcodec_find_encoder_by_name(backend.rawValue) != nil
            let node: String?
            switch backend {
            case .vaapi:
                let names = (try? FileManager.default.contentsOfDirectory(atPath: devices + "/dri")) ?? []
                node = names.filter { $0.hasPrefix("renderD") }.sorted().first.map { devices + "/dri/" + $0 }
            case .nvenc:
                node = FileManager.default.fileExists(atPath: devices + "/nvidia0") ? devices + "/nvidia0" : nil
            case .software:
                node = nil
            }
            guard hasEncoder else {
                return Finding(
                    backend: backend, usable: false, reason: "this libavcodec has no \(backend.rawValue) encoder")
            }
            guard let node else {
                let missing =
                    backend == .vaapi ? "no render node in \(devices)/dri" : "no NVIDIA device (\(devices)/nvidia0)"
                return Finding(backend: backend, usable: false, reason: missing)
            }
            do {
                var configuration = LibavH264Encoder.Configuration(backend: backend, width: 320, height: 240)
                if backend == .vaapi { configuration.device = node }
                _ = try LibavH264Encoder(configuration)
                return Finding(backend: backend, usable: true, reason: "opened on \(node)")
            } catch {
                return Finding(
                    backend: backend, usable: false, reason: "\(node) is there but the encoder did not open: \(error)")
            }
        }
    }
}
