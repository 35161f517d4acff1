import ShareCore
internal import CShareCodecs
internal import CX264

/// An H.264 encoder for real-time sending, over libx264.
///
/// Set up the way WebRTC peers expect: constrained baseline profile (main on request, never
/// high), the zerolatency tune (no lookahead, no frame delay), no B-frames, and SPS/PPS repeated
/// before every keyframe (`b_repeat_headers`), so each keyframe can be decoded on its own. Output
/// is Annex-B. Average bitrate with a VBV of `vbvSeconds` holds the target on a constrained link.
///
/// x264's rate control spends `bitrate / fps` on each frame. Its variable-frame-rate mode would
/// read real timestamps instead, but holds every frame back by one to learn its duration (a second
/// of latency at 1 fps), so the encoder runs at its nominal rate and `setRate(bitrate:frameRate:)`
/// scales the budget by how many frames actually come: the same bits per frame as the true rate.
/// Bitrate and frame-rate changes reach the running encoder (x264_encoder_reconfig) without a
/// keyframe. Not thread-safe: one encoder belongs to one encoding thread.
public final class X264Encoder {
    public enum Profile: String, Hashable, Sendable {
        /// Baseline with constraint_set1 (`42e0xx`): what every WebRTC peer decodes.
        case constrainedBaseline = "baseline"
        case main = "main"
    }

    public struct Configuration: Hashable, Sendable {
        /// Even pixel counts, as 4:2:0 needs.
        public var width: Int
        public var height: Int
        public var frameRate: Int
        /// Target bits per second (average bitrate with a one-second VBV).
        public var bitrate: Int
        public var profile: Profile
        /// At most this many frames between keyframes.
        public var keyframeInterval: Int
        /// Encoding threads (slices); 0 lets x264 choose.
        public var threads: Int
        /// The VBV buffer in seconds of the target: smaller holds the rate tighter on a link, at
        /// the cost of quality on sudden change. At 0.3 s (starting half full) no second runs
        /// more than about 1.3 × the target, a new size's keyframe included.
        public var vbvSeconds: Double = 0.3

        public init(
            width: Int, height: Int, frameRate: Int = 30, bitrate: Int = 1_000_000,
            profile: Profile = .constrainedBaseline, keyframeInterval: Int = 300, threads: Int = 0
        ) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrate = bitrate
            self.profile = profile
            self.keyframeInterval = keyframeInterval
            self.threads = threads
        }
    }

    public private(set) var configuration: Configuration
    private let handle: OpaquePointer
    private var nextFrameIndex: Int64 = 0
    private var keyframeRequested = false
    /// Frames a second actually given to the encoder (the policy's rate).
    public private(set) var actualFrameRate: Int

    /// Average bitrate, its VBV ceiling and buffer, in x264's kbit/s.
    private static func applyRate(_ bitrate: Int, vbvSeconds: Double, to param: inout x264_param_t) {
        let kbps = Int32(clamping: max(1, bitrate / 1000))
        param.rc.i_bitrate = kbps
        param.rc.i_vbv_max_bitrate = kbps
        param.rc.i_vbv_buffer_size = max(1, Int32(Double(kbps) * vbvSeconds))
    }

    public init(_ configuration: Configuration) throws(EncoderError) {
        let c = configuration
        guard c.width > 0, c.height > 0, c.width % 2 == 0, c.height % 2 == 0 else {
            throw EncoderError(codec: "x264", "\(c.width)×\(c.height) is not a positive even size")
        }
        guard c.frameRate > 0, c.bitrate >= 1000, c.keyframeInterval > 0, c.threads >= 0 else {
            throw EncoderError(codec: "x264", "frame rate, bitrate and keyframe interval must be positive")
        }
        var param = x264_param_t()
        guard x264_param_default_preset(&param, "veryfast", "zerolatency") == 0 else {
            throw EncoderError(codec: "x264", "preset veryfast/zerolatency refused")
        }
        param.i_log_level = X264_LOG_ERROR
        param.i_threads = Int32(c.threads)
        param.i_width = Int32(c.width)
        param.i_height = Int32(c.height)
        param.i_csp = X264_CSP_I420
        param.i_fps_num = UInt32(c.frameRate)
        param.i_fps_den = 1
        param.i_timebase_num = 1
        param.i_timebase_den = UInt32(c.frameRate)
        param.b_vfr_input = 0
        param.i_keyint_max = Int32(c.keyframeInterval)
        param.i_bframe = 0
        param.b_repeat_headers = 1
        param.b_annexb = 1
        param.b_aud = 0
        param.rc.i_rc_method = X264_RC_ABR
        Self.applyRate(c.bitrate, vbvSeconds: c.vbvSeconds, to: &param)
        param.rc.f_vbv_buffer_init = 0.5
        guard x264_param_apply_profile(&param, c.profile.rawValue) == 0 else {
            throw EncoderError(codec: "x264", "profile \(c.profile.rawValue) refused")
        }
        guard let handle = CShareX264_encoder_open(&param) else {
            throw EncoderError(codec: "x264", "x264_encoder_open failed for \(c.width)×\(c.height)")
        }
        self.configuration = c
        self.handle = handle
        self.actualFrameRate = c.frameRate
    }

    deinit { x264_encoder_close(handle) }

    /// Makes the next encoded frame an IDR keyframe (with its SPS and PPS).
    public func forceKeyframe() { keyframeRequested = true }

    /// A new target bitrate, with frames now coming `frameRate` times a second, from the next
    /// frame on (no keyframe, no new encoder).
    public func setRate(bitrate: Int, frameRate: Int) throws(EncoderError) {
        guard bitrate >= 1000, frameRate >= 1 else {
            throw EncoderError(codec: "x264", "bitrate \(bitrate) below 1 kbit/s or frame rate \(frameRate) below 1")
        }
        let rate = min(frameRate, configuration.frameRate)
        guard bitrate != configuration.bitrate || rate != actualFrameRate else { return }
        var param = x264_param_t()
        x264_encoder_parameters(handle, &param)
        let budget = bitrate * configuration.frameRate / rate
        Self.applyRate(budget, vbvSeconds: configuration.vbvSeconds, to: &param)
        let result = x264_encoder_reconfig(handle, &param)
        guard result == 0 else {
            throw EncoderError(codec: "x264", "x264_encoder_reconfig refused \(bitrate / 1000) kbit/s (\(result))")
        }
        configuration.bitrate = bitrate
        actualFrameRate = rate
    }

    /// Encodes one frame as the next of the stream.
    public func encode(_ frame: I420Frame) throws(EncoderError) -> EncodedFrame? {
        try encode(frame, timestamp90kHz: nextFrameIndex * 90_000 / Int64(configuration.frameRate))
    }

    /// Encodes one frame. The timestamp is the caller's (it goes with the output); x264 counts
    /// frames at its nominal rate. Returns nil only if x264 holds the frame back, which zerolatency
    /// does not do.
    public func encode(_ frame: I420Frame, timestamp90kHz: Int64) throws(EncoderError) -> EncodedFrame? {
        guard frame.width == configuration.width, frame.height == configuration.height else {
            throw EncoderError(
                codec: "x264",
                "frame is \(frame.width)×\(frame.height), encoder is "
                    + "\(configuration.width)×\(configuration.height)")
        }
        var input = x264_picture_t()
        x264_picture_init(&input)
        input.img.i_csp = X264_CSP_I420
        input.img.i_plane = 3
        input.img.i_stride = (Int32(frame.width), Int32(frame.chromaWidth), Int32(frame.chromaWidth), 0)
        input.i_type = keyframeRequested ? X264_TYPE_IDR : X264_TYPE_AUTO
        input.i_pts = nextFrameIndex
        var output = x264_picture_t()
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var nalCount: Int32 = 0
        // x264 reads the planes during the call only, and copies what it keeps: they are lent as
        // they are (taken mutably, the planes shared with the frame's other encoders were copied
        // first, 3 MB a 1080p frame).
        let size = frame.y.withUnsafeBufferPointer { yPlane in
            frame.u.withUnsafeBufferPointer { uPlane in
                frame.v.withUnsafeBufferPointer { vPlane in
                    input.img.plane = (
                        yPlane.baseAddress.map(UnsafeMutablePointer.init(mutating:)),
                        uPlane.baseAddress.map(UnsafeMutablePointer.init(mutating:)),
                        vPlane.baseAddress.map(UnsafeMutablePointer.init(mutating:)), nil
                    )
                    return x264_encoder_encode(handle, &nals, &nalCount, &input, &output)
                }
            }
        }
        guard size >= 0 else { throw EncoderError(codec: "x264", "x264_encoder_encode failed (\(size))") }
        keyframeRequested = false
        nextFrameIndex += 1
        return Self.frame(nals: nals, size: size, output: output).map { frame in
            var stamped = frame
            stamped.frameIndex = timestamp90kHz
            return stamped
        }
    }

    /// Frames x264 still holds (none with zerolatency), after the last `encode`.
    public func flush() -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        while x264_encoder_delayed_frames(handle) > 0 {
            var output = x264_picture_t()
            var nals: UnsafeMutablePointer<x264_nal_t>?
            var nalCount: Int32 = 0
            let size = x264_encoder_encode(handle, &nals, &nalCount, nil, &output)
            guard size >= 0 else { break }
            if let frame = Self.frame(nals: nals, size: size, output: output) { frames.append(frame) }
        }
        return frames
    }

    private static func frame(
        nals: UnsafeMutablePointer<x264_nal_t>?, size: Int32,
        output: x264_picture_t
    ) -> EncodedFrame? {
        // The NAL payloads of one call lie back to back in memory, start codes included.
        guard size > 0, let start = nals?.pointee.p_payload else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: start, count: Int(size)))
        // x264 hands back the frame's average QP plus one (libavcodec reads it the same way).
        let quantizer: FrameQuantizer? = output.i_qpplus1 > 0 ? .h264(qp: Int(output.i_qpplus1) - 1) : nil
        return EncodedFrame(
            bytes: bytes, isKeyframe: output.b_keyframe != 0, frameIndex: output.i_pts, quantizer: quantizer)
    }
}

@available(*, unavailable) extension X264Encoder: Sendable {}
