/// One `--stats-json` line of `sharectl share --whip` (also `--source none --camera …`): one
/// second of a WHIP share, as `#/$defs/share` of docs/stats.schema.json describes it. Optional
/// fields are left out of the line while nil; every other field is in every line. Dotted names in
/// the docs (`video.framesEncoded`) are these nested objects.
public struct ShareStatsLine: Sendable, Codable, Equatable {
    /// The first video section: the screen, or the camera when it goes alone. Counts are since the
    /// session started; fps and kbit/s are over the last second.
    public struct Video: Sendable, Codable, Equatable {
        /// What this first video section carries: "screen", or "camera" when the camera goes alone.
        public var content = "screen"
        /// The negotiated codec (H264, VP8) and the encoder's implementation (x264, libvpx,
        /// h264_vaapi, …); empty before the encoder runs.
        public var codec = ""
        public var encoder = ""
        public var width = 0
        public var height = 0
        public var framesCaptured = 0
        public var framesEncoded = 0
        public var framesSent = 0
        public var keyframes = 0
        public var keyframeRequests = 0
        public var pliReceived = 0
        public var firReceived = 0
        public var nacksReceived = 0
        public var rtxSent = 0
        public var packetsSent = 0
        public var bitrateKbps = 0
        public var targetKbps = 0
        public var fpsEncoded = 0.0
        public var fpsSent = 0.0
        public var encodeErrors = 0
        /// The send policy (balanced, detail, motion; empty before the encoder runs), the frame
        /// rate it allows now, and what holds the stream back: none, bandwidth or cpu.
        public var policy = ""
        public var fpsAllowed = 0
        public var limitedBy = "none"
        public var framesSkipped = 0
        public var framesRepeated = 0
        public var encodersMade = 0
        public var encodeMs = 0.0
        /// Keyframes sent in answer to PLI/FIR, and the slowest answer (request to last packet out).
        public var keyframeResponses = 0
        public var keyframeResponseMaxMs: Double?
        /// Retransmissions asked for and not sent: over the retransmission budget, or asked again
        /// within a round trip of the last.
        public var rtxSuppressed = 0
        /// The encoder's output against its target over the last whole second, in percent
        /// (negative: under), and frames dropped before encoding to bring it back.
        public var overshootPercent = 0
        public var framesDroppedForRate = 0
        /// The encoder's recent quantizer on its codec's scale (H.264 QP 0–51, VP8 index 0–127;
        /// lower is finer). Nil in lines of older builds, and until the encoder says one.
        public var quantizer: Double?
        /// Keyframes made because the keyframe interval passed (`--keyframe-interval`).
        public var periodicKeyframes = 0
        /// Keyframes made at two thirds of the size because the receiver asked again after two
        /// keyframes within 2 s (they did not get through). Nil in lines of older builds.
        public var smallerKeyframes: Int?
        /// A simulcast screen's layers, best first; nil without simulcast. The counts above are
        /// every layer's packets and bytes; size, frames and encoder figures are the best layer's.
        public var layers: [Layer]?

        public init() {}
    }

    /// One simulcast layer of the screen over the last second.
    public struct Layer: Sendable, Codable, Equatable {
        /// The layer's RID (h, m, l) and whether it is sent now (off when the estimate cannot carry it).
        public var rid = ""
        public var active = true
        public var width = 0
        public var height = 0
        public var fpsSent = 0.0
        public var bitrateKbps = 0
        public var targetKbps = 0
        public var framesSent = 0
        public var keyframes = 0
        public var nacksReceived = 0
        public var rtxSent = 0

        public init() {}
    }

    /// What congestion control works from and what it decided.
    public struct Congestion: Sendable, Codable, Equatable {
        /// The inputs that move the estimate now: "twcc" (transport-wide feedback), "remb", "loss"
        /// (receiver reports' loss and round trip, used when there is no transport-wide feedback).
        public var inputs: [String] = []
        public var targetKbps = 0
        /// Everything that left over the last second (media, retransmissions, audio).
        public var sentKbps = 0
        /// Retransmissions' share of the link (smoothed), taken off the encoders' targets.
        public var repairKbps = 0
        /// The video packets' headers on the wire (RTP, SRTP, UDP, IP; smoothed), taken off the
        /// encoders' targets too.
        public var overheadKbps = 0
        /// Without transport-wide feedback: the report-based estimate's last step ("increase",
        /// "hold", "application-limited", "decrease (loss)", "decrease (delay)", "decrease (REMB)",
        /// "probing", "probe delivered", "probe stopped (loss|queue|no report)").
        public var action: String?
        public var rembKbps: Int?
        public var lossFraction: Double?
        /// Without transport-wide feedback: the path's own loss as learned (loss up to this and
        /// a margin is the path's, not ours).
        public var pathLoss: Double?
        /// A bandwidth probe under way: the rate padding tops the link up to.
        public var probeKbps: Int?
        /// Padding sent in all (probes), in bytes.
        public var paddingBytes: Int?
        /// Without transport-wide feedback: retransmissions that waited for the repair budget
        /// rather than being refused, and of those the ones dropped after waiting a second.
        public var repairsWaited: Int?
        public var repairsExpired: Int?

        public init() {}
    }

    /// The camera sent beside the screen (or alone): its section's figures, whether it is capped
    /// for the screen beside it, and which camera the director is using (`device`, filled in by
    /// whoever runs the director).
    public struct Camera: Sendable, Codable, Equatable {
        public var device = ""
        public var codec = ""
        public var encoder = ""
        public var width = 0
        public var height = 0
        public var framesCaptured = 0
        public var framesEncoded = 0
        public var framesSent = 0
        public var keyframes = 0
        public var fpsSent = 0.0
        public var bitrateKbps = 0
        public var targetKbps = 0
        /// The encoder's limits now: 500 kbit/s and a long side for 360 lines while capped.
        public var maxKbps = 0
        public var maxLongSide = 0
        public var capped = false

        public init() {}
    }

    /// The audio section, when the share sends audio (not with `--no-audio`).
    public struct Audio: Sendable, Codable, Equatable {
        public var codec = "opus"
        public var framesSent = 0
        public var framesDropped = 0
        /// What was sent; -120 for silence.
        public var levelDbfs = -120.0
        public var bitrateKbps = 0

        public init() {}
    }

    public struct Connection: Sendable, Codable, Equatable {
        /// The peer connection's state (`new`, `connecting`, `connected`, `closed`, `failed: …`)
        /// and the ICE agent's.
        public var state = "new"
        public var ice = "new"
        /// The selected candidate pair, `LOCAL TYPE <-> REMOTE TYPE PROTO`, once there is one.
        public var pair: String?
        public var relayed = false
        public var srtpProfile: String?
        public var rttMs: Double?
        public var fractionLost: Double?
        public var remb: Int?
        public var bytesSent = 0
        public var bytesReceived = 0
        public var rtcpReceived = 0
        public var droppedDatagrams = 0

        public init() {}
    }

    /// Seconds since this WHIP session was published.
    public var t: Double = 0
    public var video = Video()
    public var camera: Camera?
    public var audio: Audio?
    public var connection = Connection()
    public var congestion: Congestion?
    /// What the screen watchdog is doing (`watchdog.state`, `watchdog.rung`, `watchdog.lastStep`),
    /// when one runs.
    public var watchdog: WatchdogStatus?

    public init() {}
}
