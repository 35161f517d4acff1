import ShareCore
internal import CShareCodecs
internal import CVPX

/// A VP8 encoder for real-time sending, over libvpx.
///
/// Set up the way WebRTC senders run it: one pass, realtime deadline, constant bitrate with no
/// frame dropping, error-resilient mode (so a lost frame spoils less), no lag; screen-content mode
/// for screens. libvpx is shown frames at the frame rate the sender allows now (`setRate`), one
/// frame interval apart, whatever their capture times: its rate control reads the frame rate from
/// the timestamps, and a frame after a gap — frames left out by the policy's frame rate or dropped
/// to hold the rate — would otherwise be given the whole gap's bits, come out many times its
/// share, and make the next gap. The bitrate changes on the fly. Not thread-safe: one encoder
/// belongs to one encoding thread.
public final class VP8Encoder {
    public struct Configuration: Hashable, Sendable {
        public var width: Int
        public var height: Int
        public var frameRate: Int
        /// Target bits per second.
        public var bitrate: Int
        /// At most this many frames between keyframes.
        public var keyframeInterval: Int
        public var threads: Int
        /// libvpx's speed for realtime (4–16): higher is faster and coarser. `make bench` measures
        /// them on the machine at hand; 8 keeps 1080p screen content above 30 fps on two cores.
        public var speed: Int
        /// Screen content (text, sharp edges, long still stretches) rather than a camera.
        public var screenContent = false

        public init(
            width: Int, height: Int, frameRate: Int = 30, bitrate: Int = 1_000_000,
            keyframeInterval: Int = 300, threads: Int = 1, speed: Int = 8
        ) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrate = bitrate
            self.keyframeInterval = keyframeInterval
            self.threads = threads
            self.speed = speed
        }
    }

    public private(set) var configuration: Configuration
    /// libvpx keeps pointers into the context, so it lives at a fixed address.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    /// The configuration libvpx runs with, changed in place for a new bitrate.
    private var settings: vpx_codec_enc_cfg_t
    private var nextFrameIndex: Int64 = 0
    private var lastPTS: Int64?
    /// The frame rate the sender allows now (`setRate`); frames are spaced by it.
    public private(set) var actualFrameRate: Int
    private var keyframeRequested = false

    public init(_ configuration: Configuration) throws(EncoderError) {
        let c = configuration
        guard c.width > 0, c.height > 0, c.width <= 16383, c.height <= 16383 else {
            throw EncoderError(codec: "vp8", "\(c.width)×\(c.height) is outside 1–16383")
        }
        guard c.frameRate > 0, c.bitrate >= 1000, c.keyframeInterval > 0, c.threads > 0 else {
            throw EncoderError(codec: "vp8", "frame rate, bitrate, keyframe interval and threads must be positive")
        }
        var cfg = vpx_codec_enc_cfg_t()
        let defaults = vpx_codec_enc_config_default(CShareVPX_vp8_cx(), &cfg, 0)
        guard defaults == VPX_CODEC_OK else {
            throw EncoderError(codec: "vp8", "no default configuration: \(Self.message(defaults))")
        }
        cfg.g_w = UInt32(c.width)
        cfg.g_h = UInt32(c.height)
        cfg.g_timebase = vpx_rational(num: 1, den: 90_000)
        cfg.g_threads = UInt32(c.threads)
        cfg.g_pass = VPX_RC_ONE_PASS
        cfg.g_lag_in_frames = 0
        cfg.g_error_resilient = vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT)
        cfg.rc_end_usage = VPX_CBR
        cfg.rc_target_bitrate = UInt32(max(1, c.bitrate / 1000))
        cfg.rc_dropframe_thresh = 0
        cfg.rc_min_quantizer = 2
        // libvpx's coarsest (63), not libwebrtc's 56: busy screen content at a low target
        // overshoots by half again at 56, and the link pays for it.
        cfg.rc_max_quantizer = 63
        cfg.rc_undershoot_pct = 100
        cfg.rc_overshoot_pct = 15
        cfg.rc_buf_initial_sz = 500
        cfg.rc_buf_optimal_sz = 600
        cfg.rc_buf_sz = 1000
        cfg.kf_mode = VPX_KF_AUTO
        cfg.kf_max_dist = UInt32(c.keyframeInterval)

        let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let opened = CShareVPX_enc_init_vp8(context, &cfg, 0)
        guard opened == VPX_CODEC_OK else {
            context.deallocate()
            throw EncoderError(codec: "vp8", "vpx_codec_enc_init failed: \(Self.message(opened))")
        }
        let controls: [(vp8e_enc_control_id, Int32)] = [
            (VP8E_SET_CPUUSED, -Int32(clamping: c.speed)),
            (VP8E_SET_NOISE_SENSITIVITY, 0),
            (VP8E_SET_STATIC_THRESHOLD, 1),
            (VP8E_SET_TOKEN_PARTITIONS, 0),
            (VP8E_SET_MAX_INTRA_BITRATE_PCT, 900),
            // 1: screen content (libwebrtc's choice for screenshare); 0: a camera.
            (VP8E_SET_SCREEN_CONTENT_MODE, c.screenContent ? 1 : 0)
        ]
        for (control, value) in controls {
            let result = CShareVPX_control_int(context, Int32(control.rawValue), value)
            guard result == VPX_CODEC_OK else {
                vpx_codec_destroy(context)
                context.deallocate()
                throw EncoderError(codec: "vp8", "control \(control.rawValue) refused: \(Self.message(result))")
            }
        }
        self.actualFrameRate = c.frameRate
        self.configuration = c
        self.context = context
        self.settings = cfg
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Makes the next encoded frame a keyframe.
    public func forceKeyframe() { keyframeRequested = true }

    /// A new target bitrate from the next frame on (no keyframe, no new encoder). The frame rate
    /// needs no telling: libvpx reads it from the timestamps.
    public func setRate(bitrate: Int, frameRate: Int) throws(EncoderError) {
        guard bitrate >= 1000 else { throw EncoderError(codec: "vp8", "bitrate \(bitrate) is below 1 kbit/s") }
        actualFrameRate = max(1, min(frameRate, configuration.frameRate))
        guard bitrate != configuration.bitrate else { return }
        settings.rc_target_bitrate = UInt32(bitrate / 1000)
        let result = vpx_codec_enc_config_set(context, &settings)
        guard result == VPX_CODEC_OK else {
            throw EncoderError(
                codec: "vp8", "vpx_codec_enc_config_set refused \(bitrate / 1000) kbit/s: \(Self.message(result))")
        }
        configuration.bitrate = bitrate
    }

    /// Encodes one frame as the next of a steady `frameRate` stream.
    public func encode(_ frame: I420Frame) throws(EncoderError) -> EncodedFrame? {
        try encode(frame, timestamp90kHz: nextFrameIndex * 90_000 / Int64(configuration.frameRate))
    }

    /// Encodes one frame captured at `timestamp90kHz` (later frames later). Returns nil if libvpx
    /// produced no frame for it.
    public func encode(_ frame: I420Frame, timestamp90kHz: Int64) throws(EncoderError) -> EncodedFrame? {
        guard frame.width == configuration.width, frame.height == configuration.height else {
            throw EncoderError(
                codec: "vp8",
                "frame is \(frame.width)×\(frame.height), encoder is "
                    + "\(configuration.width)×\(configuration.height)")
        }
        // One interval of the allowed frame rate after the frame before (see the type's notes).
        let interval = Int64(90_000 / actualFrameRate)
        let pts = lastPTS.map { $0 + interval } ?? 0
        let duration = UInt(interval)
        lastPTS = pts
        let flags: vpx_enc_frame_flags_t = keyframeRequested ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : 0
        // libvpx reads the planes during the call only (it copies the frame into its own
        // lookahead): they are lent as they are, not copied first.
        let result = frame.y.withUnsafeBufferPointer { yPlane in
            frame.u.withUnsafeBufferPointer { uPlane in
                frame.v.withUnsafeBufferPointer { vPlane in
                    var image = vpx_image_t()
                    // Wrap the luma plane, then point the chroma planes at their own buffers.
                    vpx_img_wrap(
                        &image, VPX_IMG_FMT_I420, UInt32(frame.width), UInt32(frame.height), 1,
                        yPlane.baseAddress.map(UnsafeMutablePointer.init(mutating:)))
                    image.planes.1 = uPlane.baseAddress.map(UnsafeMutablePointer.init(mutating:))
                    image.planes.2 = vPlane.baseAddress.map(UnsafeMutablePointer.init(mutating:))
                    image.stride = (Int32(frame.width), Int32(frame.chromaWidth), Int32(frame.chromaWidth), 0)
                    return vpx_codec_encode(context, &image, pts, duration, flags, UInt(VPX_DL_REALTIME))
                }
            }
        }
        guard result == VPX_CODEC_OK else {
            throw EncoderError(codec: "vp8", "vpx_codec_encode failed: \(Self.message(result))")
        }
        keyframeRequested = false
        defer { nextFrameIndex += 1 }
        var encoded: EncodedFrame?
        var iterator: vpx_codec_iter_t?
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let data = packet.pointee.data.frame
            guard let buffer = data.buf, data.sz > 0 else { continue }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: data.sz)
            let isKey = data.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0
            if encoded == nil {
                encoded = EncodedFrame(bytes: Array(bytes), isKeyframe: isKey, frameIndex: pts)
            } else {
                encoded?.bytes.append(contentsOf: bytes)  // partitions output would come in pieces
            }
        }
        if encoded != nil {
            var index: Int32 = -1
            if CShareVPX_control_int_out(context, Int32(VP8E_GET_LAST_QUANTIZER.rawValue), &index) == VPX_CODEC_OK,
                index >= 0
            {
                encoded?.quantizer = .vp8(index: Int(index))
            }
        }
        return encoded
    }

    private static func message(_ error: vpx_codec_err_t) -> String {
        String(cString: vpx_codec_err_to_string(error))
    }
}

@available(*, unavailable) extension VP8Encoder: Sendable {}
