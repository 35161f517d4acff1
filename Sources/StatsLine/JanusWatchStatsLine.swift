/// One second of `sharectl watch --janus`, as `#/$defs/janusWatch` of docs/stats.schema.json
/// describes it: the publisher watched, what its video and audio gave, and the connection to Janus.
/// Optional fields are left out until there is a value (the codec before the first packet, the
/// layer when the publisher is not simulcast and none was asked for).
public struct JanusWatchStatsLine: Codable, Sendable, Equatable {
    public struct Video: Codable, Sendable, Equatable {
        public var framesDecoded = 0
        public var keyframesDecoded = 0
        public var width = 0
        public var height = 0
        /// Frames decoded a second since the line before.
        public var fps: Double = 0
        public var bitrateKbps = 0
        public var packetsLost = 0
        public var nacksSent = 0
        public var plisSent = 0
        /// Repair, to tell where a stalled picture stands: frames and keyframes the jitter buffer
        /// made whole, frames the decoder refused, lost packets a retransmission or a late arrival
        /// brought and packets given up, and frames passed over while waiting for a keyframe.
        public var framesAssembled = 0
        public var keyframesAssembled = 0
        public var decodeErrors = 0
        public var packetsRecovered = 0
        public var packetsGivenUp = 0
        public var framesSkippedForKeyframe = 0
        public var codec: String?
        /// The simulcast layer asked of Janus (0 the smallest).
        public var layer: Int?
        /// How much the path's queue holds, from the packets' arrival against their RTP times.
        public var queuingDelayMs: Double?
        /// How many times the subscription was started afresh because nothing decoded
        /// (`SubscriptionRecoveryRule`); the counts above go on across them.
        public var restarts = 0

        public init() {}
    }

    public struct Audio: Codable, Sendable, Equatable {
        public var framesDecoded = 0
        public var levelDbfs: Double?

        public init() {}
    }

    public struct Connection: Codable, Sendable, Equatable {
        /// The peer connection's state (`SecureTransport.State`).
        public var state = ""
        /// The selected candidate pair, once there is one.
        public var pair: String?

        public init() {}
    }

    /// Seconds since the watch started.
    public var t: Double = 0
    /// The publisher's display name (its id when it has none; `?` before it is known).
    public var publisher = ""
    public var video = Video()
    public var audio = Audio()
    public var connection = Connection()

    public init() {}
}
