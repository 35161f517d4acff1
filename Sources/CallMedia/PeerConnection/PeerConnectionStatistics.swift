import SDPWire
import WebRTCTransport

/// A snapshot of one peer connection's figures (`PeerConnection.statistics()`): counts since the
/// start, read from the media threads' counters; rates are the reader's business.
public struct PeerConnectionStatistics: Sendable {
    /// One simulcast layer of a screen we send.
    public struct Layer: Sendable, Equatable {
        public var rid = ""
        public var active = true
        public var width = 0
        public var height = 0
        public var framesEncoded = 0
        public var framesSent = 0
        public var keyframes = 0
        public var packets = 0
        public var bytes = 0
        public var rtxPackets = 0
        public var nacksReceived = 0
        public var targetBitrate = 0
    }

    public struct Sent: Sendable, Equatable {
        /// A simulcast screen's layers, best first (empty without simulcast). The figures above
        /// count every layer's packets and bytes; the encoder's are the best layer's.
        public var layers: [Layer] = []
        /// A mesh screen from shared layer encoders: the layer this connection is sent (0 the full
        /// size, 1 half, 2 a quarter, -1 an encoder of its own after a rebuild); its encoder's figures
        /// are that encoder's.
        public var sharedLayer: Int?
        public var packets = 0
        public var bytes = 0
        public var rtxPackets = 0
        public var sendFailures = 0
        /// Video: frames the source delivered, frames encoded, keyframes made and asked for.
        public var framesCaptured = 0
        public var framesEncoded = 0
        /// Frames whose every packet left (encoded frames a failed send did not lose).
        public var framesSent = 0
        public var keyframesEncoded = 0
        public var keyframeRequests = 0
        public var encodeErrors = 0
        public var encoder: String?
        public var width = 0
        public var height = 0
        public var targetBitrate = 0
        /// Video: the encoder's limits now (lowered for a camera beside a shared screen).
        public var maxBitrate = 0
        public var maxLongSide = 0
        /// Video: the send policy, the frame rate it allows now, and what holds the stream back.
        public var policy: String?
        public var allowedFrameRate = 0
        public var limitedBy: String?
        public var framesSkipped = 0
        public var framesRepeated = 0
        public var encodersMade = 0
        /// Smoothed cost of one frame (convert, scale, encode), milliseconds.
        public var encodeMs = 0.0
        /// Keyframes that answered a receiver's PLI/FIR, and how long the last and slowest took.
        public var keyframeResponses = 0
        public var keyframeResponseLastMs: Double?
        public var keyframeResponseMaxMs: Double?
        /// Retransmissions not sent: over the budget or asked again within a round trip.
        public var rtxRefused = 0
        public var rtxTooSoon = 0
        /// The encoder's output against its target over the last second (percent), frames dropped
        /// to bring it back, and keyframes made because the keyframe interval passed.
        public var overshootPercent = 0
        /// The encoder's recent quantizer (`EncodingThread.Stats.quantizer`).
        public var quantizer: Double?
        public var framesDroppedForRate = 0
        public var periodicKeyframes = 0
        public var smallerKeyframes = 0
        /// Audio: 20 ms frames sent and dropped, and the level of what was sent.
        public var audioFramesSent = 0
        /// What the audio is taken from ("tone 440 Hz", "microphone: NODE"), and whether it has been
        /// under −90 dBFS for 5 s.
        public var audioSource: String?
        public var audioSilent = false
        /// Sending digital silence for the mute switch; what is sent lights the speaking indicator.
        public var audioMuted = false
        public var audioSpeaking = false
        public var audioFramesDropped = 0
        public var audioLevelDbfs: Double?
    }

    public struct Received: Sendable, Equatable {
        /// Video: how much the path's queue holds now, from the packets' arrival against their RTP
        /// times (`ArrivalDelay`).
        public var queuingDelayMs: Double?
        public var packets = 0
        public var bytes = 0
        public var rtxPackets = 0
        public var packetsLost = 0
        public var jitterMs: Double?
        public var senderReports = 0
        public var receiverReportsSent = 0
        public var plisSent = 0
        /// Video: frames assembled, dropped, decoded; the last decoded picture's size.
        public var framesAssembled = 0
        public var keyframesAssembled = 0
        public var framesDropped = 0
        public var framesDecoded = 0
        public var keyframesDecoded = 0
        public var decodeErrors = 0
        public var width = 0
        public var height = 0
        public var waitingForKeyframe = false
        /// Frames a wedged decoder swallowed (fault injection).
        public var framesSwallowed = 0
        /// Video repair: generic NACKs sent and the packets they asked for (each try), missing
        /// packets an RTX packet brought, packets that filled a hole in time and packets given up,
        /// frames lost to them and frames passed over until the next keyframe, and how long a hole
        /// holds the frames after it (milliseconds).
        public var nacksSent = 0
        public var packetsNacked = 0
        public var rtxRecovered = 0
        public var packetsRecovered = 0
        public var packetsGivenUp = 0
        public var framesGivenUp = 0
        public var framesSkippedForKeyframe = 0
        public var holdMs = 0
        /// Audio: frames decoded and concealed, the level of the last and the loudest frame.
        public var audioFramesDecoded = 0
        public var audioFramesConcealed = 0
        public var audioSamplesDecoded = 0
        /// The loudest 20 ms frame of the last second and of the last three seconds.
        public var audioRecentPeakDbfs: Double?
        public var audioHearingPeakDbfs: Double?
        public var audioLevelDbfs: Double?
        public var audioPeakDbfs: Double?
        /// What we decode of them lights the speaking indicator.
        public var audioSpeaking = false
        /// What the jitter buffer holds, in milliseconds.
        public var audioBufferedMs = 0
    }

    /// The peer's feedback on what we send: our `RTCPReceiver`'s figures.
    public typealias Feedback = RTCPReceiver.Figures

    public struct TransceiverStatistics: Sendable {
        public var mid: String?
        public var kind: Transceiver.Kind
        public var direction: MediaDirection
        public var codec: MediaCodec?
        public var sent: Sent?
        public var received: Received?
        public var feedback: Feedback?
    }

    public struct Transport: Sendable {
        public var state: PeerConnection.State
        public var iceState: String
        public var selectedPair: String?
        public var relayed = false
        public var srtpProfile: String?
        public var bytesSent = 0
        public var bytesReceived = 0
        public var rtpReceived = 0
        public var rtcpReceived = 0
        /// Datagrams thrown away: not STUN/DTLS/RTP, before keys, or failing SRTP authentication.
        public var droppedDatagrams = 0
        public var rtpUnrouted = 0
        public var senderReportsSent = 0
        public var receiverReportsSent = 0
        /// The round-trip time our sender reports measured (the latest of any stream).
        public var rttMs: Double?
    }

    public var transceivers: [TransceiverStatistics]
    public var transport: Transport
    /// The send-side bandwidth estimate, the pacer, and repair (nil before the transport exists).
    public var congestion: CongestionStatistics?

    /// The first transceiver of `kind`.
    public func transceiver(_ kind: Transceiver.Kind) -> TransceiverStatistics? {
        transceivers.first { $0.kind == kind }
    }
}
