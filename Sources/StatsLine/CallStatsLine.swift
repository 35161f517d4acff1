/// One `--stats-json` line of `sharectl share --room` and `sharectl watch`: a room call's second,
/// as `#/$defs/call` of docs/stats.schema.json describes it — the call, then one entry per
/// participant: what we decode of them (screen, camera, audio), what we send them, the connection,
/// and what they say they decode of us. `@Nullable` fields are written `null` while nil; plain
/// optionals are left out.
public struct CallStatsLine: Sendable, Codable, Equatable {
    /// A screen or camera we receive and decode.
    public struct View: Sendable, Codable, Equatable {
        public var framesDecoded = 0
        public var width = 0
        public var height = 0
        public var fps = 0.0
        public var freezes = 0
        public var stalled = false
        /// The section a screen arrives on.
        public var mid: String?
        public var packets = 0
        public var framesDropped = 0
        public var keyframesDecoded = 0
        public var decodeErrors = 0
        public var plisSent = 0
        @Nullable public var codec: String? = nil
        /// Frames a wedged decoder swallowed (fault injection) and frames assembled for the decoder.
        public var framesSwallowed = 0
        public var framesAssembled = 0
        /// Repair: NACKs sent, packets RTX brought back, frames given up (a packet never came).
        public var nacksSent = 0
        public var rtxRecovered = 0
        public var framesGivenUp = 0

        public init() {}
    }

    public struct Audio: Sendable, Codable, Equatable {
        public var samplesDecoded = 0
        public var framesConcealed = 0
        /// The loudest 20 ms frame of the last second; -120 for silence.
        public var levelDbfs = -120.0
        /// The audio path from them is established: connected, and their packets decoded and
        /// played within the last 2 s (or connected and they say they are muted).
        public var hearing = false
        /// "No sound from NAME": their packets decode, they are unmuted, and the peak has stayed
        /// under −85 dBFS for 5 s.
        public var noSound = false
        /// What we decode of them lights the speaking indicator.
        public var speaking = false
        /// They say they are muted.
        public var muted = false
        /// What the jitter buffer holds, in milliseconds.
        public var bufferedMs = 0

        public init(samplesDecoded: Int = 0, framesConcealed: Int = 0, levelDbfs: Double = -120, hearing: Bool = false)
        {
            self.samplesDecoded = samplesDecoded
            self.framesConcealed = framesConcealed
            self.levelDbfs = levelDbfs
            self.hearing = hearing
        }
    }

    /// Our screen (`video`) or camera (`cameraSent`) to one participant.
    public struct Sent: Sendable, Codable, Equatable {
        public var framesSent = 0
        public var framesEncoded = 0
        public var width = 0
        public var height = 0
        public var keyframes = 0
        /// The encoder's implementation (x264, libvpx, …); `codecName` is the negotiated codec.
        @Nullable public var encoder: String? = nil
        /// Our camera: the encoder's target and limit, and whether it is capped beside our screen
        /// (the screen has a target too).
        public var targetKbps: Int?
        public var maxKbps: Int?
        public var capped: Bool?
        /// The section it goes on (a rebuild moves it to another) and encoders made for it.
        @Nullable public var mid: String? = nil
        public var encodersMade = 0
        /// Our screen to them: the negotiated codec ("VP8"), frames and kbit/s sent over the last
        /// second, what holds it back (`none`, `bandwidth`, `cpu`) and the send policy.
        @Nullable public var codecName: String? = nil
        public var fps = 0.0
        public var bitrateKbps = 0
        @Nullable public var limitedBy: String? = nil
        @Nullable public var policy: String? = nil
        /// Our screen from shared layer encoders (`share --room --simulcast`): the layer this
        /// participant is sent (`full`, `half`, `quarter`, or `own`: an encoder of its own for a while
        /// after a rebuild); null in a mesh without shared layers.
        @Nullable public var layer: String? = nil
        /// Our screen to them: what moves this connection's estimate now (`twcc`, `remb`, `loss`),
        /// as the WHIP share's `cc.inputs` says it.
        public var ccInputs: [String]?

        public init(
            framesSent: Int = 0, framesEncoded: Int = 0, width: Int = 0, height: Int = 0, keyframes: Int = 0,
            encoder: String? = nil, targetKbps: Int? = nil, maxKbps: Int? = nil, capped: Bool? = nil
        ) {
            self.framesSent = framesSent
            self.framesEncoded = framesEncoded
            self.width = width
            self.height = height
            self.keyframes = keyframes
            self.encoder = encoder
            self.targetKbps = targetKbps
            self.maxKbps = maxKbps
            self.capped = capped
        }
    }

    public struct AudioSent: Sendable, Codable, Equatable {
        public var framesSent = 0
        public var levelDbfs = -120.0
        public var framesDropped = 0
        /// What the audio is taken from (`tone 440 Hz`, `microphone: NODE`, a failure in brackets).
        public var source = ""
        /// "Your microphone isn't picking anything up" (under −90 dBFS for 5 s while sending unmuted).
        public var silent = false
        /// Digital silence goes for the mute switch.
        public var muted = false

        public init(
            framesSent: Int = 0, levelDbfs: Double = -120, framesDropped: Int = 0, source: String = "",
            silent: Bool = false
        ) {
            self.framesSent = framesSent
            self.levelDbfs = levelDbfs
            self.framesDropped = framesDropped
            self.source = source
            self.silent = silent
        }
    }

    public struct Connection: Sendable, Codable, Equatable {
        /// The peer connection's state: `new`, `connecting`, `connected`, `closed`, `failed: …`.
        public var state = "new"
        @Nullable public var pair: String? = nil
        @Nullable public var rttMs: Double? = nil

        public init() {}
    }

    /// What a participant last reported of us.
    public struct TheirView: Sendable, Codable, Equatable {
        @Nullable public var screenFramesDecoded: Int? = nil
        @Nullable public var screenStalled: Bool? = nil
        @Nullable public var cameraFramesDecoded: Int? = nil
        public var hearsUs = false

        public init(
            screenFramesDecoded: Int? = nil, screenStalled: Bool? = nil, cameraFramesDecoded: Int? = nil,
            hearsUs: Bool = false
        ) {
            self.screenFramesDecoded = screenFramesDecoded
            self.screenStalled = screenStalled
            self.cameraFramesDecoded = cameraFramesDecoded
            self.hearsUs = hearsUs
        }
    }

    /// The report of our screen in `theirView` under the names the receiver-driven ladder reads.
    public struct Report: Sendable, Codable, Equatable {
        @Nullable public var screenStalled: Bool? = nil
        @Nullable public var framesDecoded: Int? = nil

        public init(_ view: TheirView) {
            screenStalled = view.screenStalled
            framesDecoded = view.screenFramesDecoded
        }
    }

    public struct Peer: Sendable, Codable, Equatable {
        public var id: String
        public var name: String
        public var sharing = false
        /// Their screen, while they share, and their camera.
        @Nullable public var screen: View? = nil
        @Nullable public var camera: View? = nil
        @Nullable public var audio: Audio? = nil
        /// Our screen to them, while we share, our camera and our audio.
        @Nullable public var video: Sent? = nil
        @Nullable public var cameraSent: Sent? = nil
        @Nullable public var audioSent: AudioSent? = nil
        public var connection = Connection()
        /// What they last reported of us: `theirView`, and `report` (both or neither; a writer
        /// sets `report` from `theirView`).
        public var theirView: TheirView?
        public var report: Report?

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Seconds since the call started (to the millisecond).
    public var t = 0.0
    /// Our participant id, once welcomed.
    @Nullable public var id: String? = nil
    /// `up` or `down`.
    public var signalling = "down"
    public var reconnecting = false
    /// How many times "Reconnecting…" was said.
    public var reconnectingShown = 0
    public var sharing = false
    /// `share` messages sent (on and off).
    public var sharesSent = 0
    public var welcomes = 0
    public var resumes = 0
    public var peers: [Peer] = []
    /// Names of participants who left.
    public var left: [String] = []
    /// Where call audio goes: `pipewire: NODE`, or `counted (no PipeWire output: REASON)`, and
    /// the mixer's short reads.
    public var audioOutput = ""
    public var audioOutputShortReads = 0
    /// What the microphone passes through with `--audio mic`: "echo cancellation on (webrtc),
    /// noise suppression on", "echo cancellation off, noise suppression off (…)"; left out
    /// without a microphone.
    public var audioProcessing: String?
    /// Our microphone's mute switch (`mute` / `unmute`); left out when we send no audio.
    public var muted: Bool?
    /// What we send lights the speaking indicator (seed 000: −42 to −12 dBFS, kept up 0.15 s).
    public var speaking = false
    /// Names of the participants we report "No sound from".
    public var noSoundFrom: [String] = []
    /// Who hears whom, in words: "No sound from NAME", "NAME is connecting and can't hear you
    /// yet", "NAME isn't getting any sound from you", "Reconnecting to NAME…".
    public var audioNotices: [String] = []
    /// Faults injected and in force (drills and tests): `decoder-wedge NAME`, `capture-stall`, …
    public var faults: [String] = []
    /// Connections made again after one failed.
    public var connectionsRenewed = 0
    /// The screen watchdog while we share (`watchdog.state`, `.rung`, `.lastStep`, `.recent`, `.notices`).
    public var watchdog: WatchdogStatus?

    public init() {}
}
