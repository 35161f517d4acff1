/// How long the video receive side keeps asking for a lost packet (generic NACK, answered on RTX)
/// and how long a frame waits for it, from the round-trip time when one is known.
///
/// The shape follows libwebrtc's NACK module and frame buffer: a packet is asked for at once, then
/// again after each round trip (here at least every 20 ms, the NACK timer's tick and the sender's
/// minimum resend interval); frames behind a hole wait while a retransmission can still come, and
/// a hole that outlasts the wait is given up: the frame is lost and a keyframe repairs the picture.
///
/// The wait is `holdBase` plus three round trips, between `minimumHold` and `maximumHold`:
/// - with random loss `p` in each direction a try fails with probability about `2p` (the NACK or
///   the retransmission is lost), about 19 % at 10 % loss; 150 ms leaves room for five or more
///   tries at 20 ms, so a hole is given up about once in ten thousand;
/// - three round trips more because each try costs one on a longer path;
/// - at most 400 ms: past that a keyframe (PLI, encode, send: about one round trip and a frame
///   interval or two) mends the picture sooner than more waiting, and the sender keeps its history
///   1.5 s, far longer.
/// With no round-trip time known (a receive-only leg measures none) 50 ms is assumed, between a
/// LAN and a long path, for retries and the wait alike (300 ms).
struct RetransmissionTiming: Sendable, Equatable {
    static let minimumRetryMicros: Int64 = 20_000
    static let assumedRTTMicros: Int64 = 50_000
    static let holdBaseMicros: Int64 = 150_000
    static let minimumHoldMicros: Int64 = 150_000
    static let maximumHoldMicros: Int64 = 400_000

    /// The round trip the figures come from (measured, or the assumed one).
    let rttMicros: Int64

    init(rttMicros: Int64?) {
        self.rttMicros = max(0, rttMicros ?? Self.assumedRTTMicros)
    }

    /// How long after asking for a packet to ask again.
    var retryMicros: Int64 { max(Self.minimumRetryMicros, rttMicros) }

    /// How long a hole holds the frames behind it before it is given up.
    var holdMicros: Int64 {
        min(Self.maximumHoldMicros, max(Self.minimumHoldMicros, Self.holdBaseMicros + 3 * rttMicros))
    }
}
