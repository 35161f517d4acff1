import RTPWire
/// A codec sharectl's media engine sends and receives.
public enum MediaCodec: String, Hashable, Sendable, CaseIterable {
    /// Only packetization-mode 1 (FU-A, STAP-A) and only the profiles in
    /// `CodecCapabilities.h264Profiles`.
    case h264 = "H264"
    case vp8 = "VP8"
    /// 48 kHz, two channels in SDP (RFC 7587 §7) whatever is actually sent.
    case opus = "opus"

    public var kind: MediaKind { self == .opus ? .audio : .video }
    public var clockRate: UInt32 { self == .opus ? 48_000 : 90_000 }
}

/// What this endpoint can do, and the rules by which offered payload types are matched to it.
///
/// - H.264: `H264/90000` with `packetization-mode=1` and a `profile-level-id` whose profile is in
///   `h264Profiles` (Constrained Baseline or Main by default; never High: x264 is set up for
///   Constrained Baseline, and Chromium's OpenH264 offers no High).
/// - VP8: `VP8/90000`.
/// - Opus: `opus/48000/2`.
/// - RTX (`rtx/<clock>` with `apt=`) only for a chosen codec, and only when `rtx` is on.
public struct CodecCapabilities: Hashable, Sendable {
    /// Video codecs in order of preference.
    public var videoCodecs: [MediaCodec]
    /// H.264 profiles accepted, in order of preference; an offer of ours names the first.
    public var h264Profiles: [H264Profile]
    /// Audio codecs in order of preference.
    public var audioCodecs: [MediaCodec]
    /// Offer and accept RTX (RFC 4588) for the chosen video codecs.
    public var rtx: Bool
    /// RTCP feedback for video that the engine answers or acts on.
    public var videoFeedback: [RTCPFeedback]
    /// RTCP feedback for audio.
    public var audioFeedback: [RTCPFeedback]
    /// Header extension URIs the engine reads or writes.
    public var headerExtensions: [String]
    /// The fmtp we ask for when receiving Opus.
    public var opusParameters: [FormatParameter]

    public init(
        videoCodecs: [MediaCodec] = [.h264, .vp8],
        h264Profiles: [H264Profile] = [.constrainedBaseline, .main],
        audioCodecs: [MediaCodec] = [.opus], rtx: Bool = true,
        videoFeedback: [RTCPFeedback] = [.remb, .transportCC, .fir, .nack, .pli],
        audioFeedback: [RTCPFeedback] = [.transportCC],
        headerExtensions: [String] = [
            ExtensionMap.sdesMid, ExtensionMap.absSendTime,
            ExtensionMap.transportWideCC
        ],
        opusParameters: [FormatParameter] = [
            FormatParameter("minptime", "10"),
            FormatParameter("useinbandfec", "1")
        ]
    ) {
        self.videoCodecs = videoCodecs
        self.h264Profiles = h264Profiles
        self.audioCodecs = audioCodecs
        self.rtx = rtx
        self.videoFeedback = videoFeedback
        self.audioFeedback = audioFeedback
        self.headerExtensions = headerExtensions
        self.opusParameters = opusParameters
    }

    /// sharectl's defaults: H.264 preferred while a screen is shared, VP8 beside it.
    public static let sharectl = CodecCapabilities()

    /// A connection that only receives: plain Baseline H.264 as well, last. libavcodec decodes it
    /// (no WebRTC encoder uses its ASO/FMO), and it is what Janus offers a subscriber to a
    /// Chromium publisher whose OpenH264 it negotiated as `42001f`. Never for sending: our
    /// offers name the first profile, and x264 is set up for Constrained Baseline.
    public static let receiving = CodecCapabilities(h264Profiles: [.constrainedBaseline, .main, .baseline])

    /// The codec a payload type stands for, if these capabilities take it.
    public func codec(of payload: PayloadFormat) -> MediaCodec? {
        guard let map = payload.rtpMap else { return nil }
        if map.isEncoding("H264"), map.clockRate == 90_000, videoCodecs.contains(.h264),
            h264ProfileRank(payload) != nil
        {
            return .h264
        }
        if map.isEncoding("VP8"), map.clockRate == 90_000, videoCodecs.contains(.vp8) { return .vp8 }
        if map.isEncoding("opus"), map.clockRate == 48_000, map.channels == 2, audioCodecs.contains(.opus) {
            return .opus
        }
        return nil
    }

    /// Where an offered payload type ranks among ours: lower is better, nil when not taken.
    public func rank(of payload: PayloadFormat) -> Int? {
        guard let codec = codec(of: payload) else { return nil }
        let list = codec.kind == .audio ? audioCodecs : videoCodecs
        guard let position = list.firstIndex(of: codec) else { return nil }
        return position * 100 + (codec == .h264 ? h264ProfileRank(payload) ?? 0 : 0)
    }

    /// The H.264 profile of a payload type, read from its fmtp (absent means Baseline, level 1.0).
    public static func h264ProfileLevelID(of payload: PayloadFormat) -> H264ProfileLevelID? {
        guard let text = payload.parameter("profile-level-id") else { return .absent }
        return H264ProfileLevelID(hex: text)
    }

    /// The position of the payload's profile in `h264Profiles`, if it is packetization-mode 1.
    private func h264ProfileRank(_ payload: PayloadFormat) -> Int? {
        guard payload.parameter("packetization-mode") == "1",
            let id = CodecCapabilities.h264ProfileLevelID(of: payload)
        else { return nil }
        return h264Profiles.firstIndex(of: id.profile)
    }

    /// Feedback from `offered` that the engine supports for `kind`, in the offered order.
    public func supportedFeedback(_ offered: [RTCPFeedback], kind: MediaKind) -> [RTCPFeedback] {
        let ours = kind == .audio ? audioFeedback : videoFeedback
        return offered.filter { ours.contains($0) }
    }
}
