import RTPWire
import VideoSend

/// One received video stream between the transport and the decoder, a pure value: RTP packets go
/// in as they arrive, whole frames come out in order to a decode function, on the caller's clock.
///
/// - Packets are put back in sequence order by a `VideoReorderBuffer` that holds the frames after a
///   missing packet for `holdMicros` (`RetransmissionTiming`: while the NACK module's retransmission
///   can still come); with nothing missing a frame goes on as soon as its last packet is in.
/// - The depayloader assembles frames; a frame with a packet given up (or a malformed one) is lost.
/// - After a lost frame, or a frame that failed to decode, only a keyframe is decoded: every
///   frame until then is passed over (counted), since a P-frame whose reference is missing decodes
///   into garbage. `waitingForKeyframe` is then true, which is what sends PLIs (rate limited by the
///   `KeyframeRequestPolicy`). It starts true: nothing decodable has arrived yet.
/// - A new SSRC, or sequence numbers that jump more than `VideoReorderBuffer.restartDistance`,
///   start afresh: what the old numbering left is given out first.
///
/// Like libwebrtc's frame buffer for streams without layers: a frame is decodable when it is
/// whole and every frame before it was decoded; a frame never completed waits for a keyframe.
struct VideoFrameBuffer: Sendable {
    struct Counters: Sendable, Equatable {
        /// Packets handed to the depayloader.
        var packets = 0
        var framesAssembled = 0
        var keyframesAssembled = 0
        /// Frames lost: a packet given up, or a malformed one.
        var framesGivenUp = 0
        var gaps = 0
        var malformed = 0
        var framesSkippedForKeyframe = 0
        /// Packets that filled a hole in time (late or retransmitted) and packets given up.
        var packetsRecovered = 0
        var packetsGivenUp = 0
        var restarts = 0
        var lastError: String?
    }

    /// What the decoder made of a frame.
    enum Decoded: Sendable, Equatable {
        case picture
        /// No picture and no error (a decoder that needs more, or one swallowing frames).
        case nothing
        case failed
    }

    let codec: VideoCodec
    private var reorder: VideoReorderBuffer<RTPPacket>
    private var depayloader: VideoDepayloader
    private var ssrc: UInt32?
    /// What earlier streams left when a new SSRC came, one run of packets per stream, to
    /// depayload before the current one's: the first run continues the stream decoded so far,
    /// each later one (the SSRC changed more than once between releases) starts afresh.
    private var previousStreams: [[RTPPacket]] = []
    private var newStreams = 0
    /// A new SSRC came since the last release: the depayloader starts afresh after the old packets.
    private var streamChanged = false
    private(set) var waitingForKeyframe = true
    private(set) var counters = Counters()

    init(codec: VideoCodec, holdMicros: Int64) {
        self.codec = codec
        reorder = VideoReorderBuffer(wait: .microseconds(holdMicros))
        depayloader = VideoDepayloader(codec: codec)
    }

    /// How long a hole holds the frames after it.
    var holdMicros: Int64 {
        get { reorder.wait.inMicroseconds }
        set { reorder.wait = .microseconds(newValue) }
    }

    /// One packet as it arrived.
    mutating func insert(_ packet: RTPPacket, now: ContinuousClock.Instant) {
        if let current = ssrc, current != packet.ssrc {
            previousStreams.append(reorder.drain())
            newStreams += 1
            streamChanged = true
        }
        ssrc = packet.ssrc
        reorder.insert(sequence: packet.sequenceNumber, packet, now: now)
    }

    /// Packets were lost before they reached this buffer (a queue that overflowed): the frames
    /// they belonged to cannot be whole, so wait for a keyframe.
    mutating func lostPackets() { waitingForKeyframe = true }

    /// Gives what may go on now to `decode`, frame by frame in order, and learns from each outcome.
    mutating func release(now: ContinuousClock.Instant, decode: (DepayloadedFrame) -> Decoded) {
        let previous = previousStreams
        previousStreams = []
        for (index, packets) in previous.enumerated() {
            if index > 0 { startAfresh() }
            for packet in packets { depayload(packet, decode: decode) }
        }
        if streamChanged {
            streamChanged = false
            startAfresh()
        }
        for packet in reorder.release(now: now) { depayload(packet, decode: decode) }
        let repair = reorder.counters
        counters.packetsRecovered = repair.reordered
        counters.packetsGivenUp = repair.skipped
        counters.restarts = repair.restarts + newStreams
    }

    /// A new stream: its numbering owes nothing to the old one's, and its frames refer to nothing
    /// decoded so far.
    private mutating func startAfresh() {
        depayloader = VideoDepayloader(codec: codec)
        waitingForKeyframe = true
    }

    /// When `release` may next give something out although nothing new arrives, or nil.
    var nextDeadline: ContinuousClock.Instant? { reorder.nextDeadline }

    private mutating func depayload(_ packet: RTPPacket, decode: (DepayloadedFrame) -> Decoded) {
        counters.packets += 1
        let events: [DepayloadEvent]
        do {
            events = try depayloader.settle(packet)
        } catch {
            counters.lastError = "\(error)"
            counters.malformed += 1
            counters.framesGivenUp += 1  // the frame it belonged to cannot be whole
            waitingForKeyframe = true
            return
        }
        for event in events {
            switch event {
            case .gap:
                counters.gaps += 1
            case .dropped:
                counters.framesGivenUp += 1
                waitingForKeyframe = true
            case .frame(let frame):
                counters.framesAssembled += 1
                if frame.isKeyframe { counters.keyframesAssembled += 1 }
                if waitingForKeyframe && !frame.isKeyframe {
                    counters.framesSkippedForKeyframe += 1
                    continue
                }
                switch decode(frame) {
                case .picture: if frame.isKeyframe { waitingForKeyframe = false }
                case .nothing: break
                case .failed: waitingForKeyframe = true
                }
            }
        }
    }
}
