import Foundation
import RTPWire
import ShareCore
import Synchronization
import VideoSend

/// One incoming video stream's depayloading and decoding, on a thread of its own. Packets arrive
/// from the transport's thread (the GLib loop) through `push`, which only queues them: decoding a
/// frame takes milliseconds (tens for a large keyframe), and the loop thread also carries ICE
/// checks, DTLS and every outgoing packet, so it must never wait for a decoder.
///
/// Packets go through a `VideoFrameBuffer`, which holds the frames after a missing packet while
/// its retransmission may still come (`RetransmissionTiming`, from the round-trip time the
/// connection passes in), so frames reach the decoder whole and in order. A frame given up (a
/// packet never came) is dropped, and so is every frame after it until a keyframe: a P-frame
/// whose reference is missing would only decode into garbage.
///
/// Counts what it assembles, repairs, gives up, drops and decodes, remembers the last decoded
/// picture's size, and says when it waits for a keyframe (none decoded yet, or a frame was dropped
/// or failed to decode since the last one) so the receiver can send a PLI. Thread-safe: the queue
/// and the counters are behind locks; the depayloader and decoder belong to the thread.
public final class VideoReceiveThread: Sendable {
    public struct Counters: Sendable, Equatable {
        public var packets = 0
        public var framesAssembled = 0
        public var keyframesAssembled = 0
        public var framesDropped = 0
        public var gaps = 0
        public var malformed = 0
        public var framesDecoded = 0
        public var keyframesDecoded = 0
        public var decodeErrors = 0
        /// Packets thrown away because the thread fell behind by more than `queueLimit`.
        public var queueOverflow = 0
        public var width = 0
        public var height = 0
        public var waitingForKeyframe = true
        public var lastError: String?
        /// Frames a wedged decoder swallowed (fault injection, `setWedged`).
        public var framesSwallowed = 0
        /// Packets that filled a hole in time (retransmitted or late), and packets given up.
        public var packetsRecovered = 0
        public var packetsGivenUp = 0
        /// Frames lost to packets given up (or malformed), and whole frames passed over while
        /// waiting for a keyframe after one.
        public var framesGivenUp = 0
        public var framesSkippedForKeyframe = 0
        /// The sender started numbering afresh (a new SSRC or a jump in sequence numbers).
        public var restarts = 0
        /// How long a hole holds the frames after it now, milliseconds.
        public var holdMs = 0
    }

    /// Packets waiting beyond this are dropped oldest first (the decoder then asks for a keyframe).
    public static let queueLimit = 2000

    public let codec: VideoCodec
    private let logger: Logger
    private let queue = Locked<[RTPPacket]>([])
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let stats = Locked(Counters())
    private let onPicture: (@Sendable (VideoFrame) -> Void)?
    private let latest = Locked<VideoFrame?>(nil)
    private let wedged = Atomic<Bool>(false)
    /// The connection's round-trip time in microseconds, or -1 while none is known.
    private let roundTrip = Atomic<Int64>(-1)
    /// Packets were thrown away before the thread saw them (the queue overflowed).
    private let overflowed = Atomic<Bool>(false)

    /// `onPicture` (optional) sees every decoded picture, on this thread.
    public init(codec: VideoCodec, logger: Logger, onPicture: (@Sendable (VideoFrame) -> Void)? = nil) {
        self.codec = codec
        self.logger = logger
        self.onPicture = onPicture
    }

    public var counters: Counters { stats.withLock { $0 } }
    /// The last decoded picture (for snapshots), if any.
    public var latestPicture: VideoFrame? { latest.withLock { $0 } }

    /// Starts the thread; the decoder is opened here so a failure reaches the caller.
    public func start() throws {
        let decoder = try VideoDecoder(codec: codec)
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let handOff = HandOff(decoder)
        let thread = Thread { [self] in run(handOff.take()!) }
        thread.name = "decoder-\(codec.rawValue.lowercased())"
        thread.start()
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wakeup.signal()
        finished.wait()
    }

    /// Fault injection for drills and tests, off unless asked for: a wedged decoder swallows every
    /// frame (nothing decodes, the decoded count stops) until unwedged or replaced.
    public func setWedged(_ on: Bool) { wedged.store(on, ordering: .releasing) }
    public var isWedged: Bool { wedged.load(ordering: .acquiring) }

    /// The round-trip time to the sender, when the connection knows it: how long to wait for a
    /// retransmission follows from it.
    public func setRoundTrip(micros: Int64?) { roundTrip.store(micros ?? -1, ordering: .relaxed) }

    var retransmissionTiming: RetransmissionTiming {
        let rtt = roundTrip.load(ordering: .relaxed)
        return RetransmissionTiming(rttMicros: rtt >= 0 ? rtt : nil)
    }

    /// Queues one packet (in arrival order). Any thread; never blocks on decoding.
    public func push(_ packet: RTPPacket) {
        let overflow = queue.withLock { q -> Bool in
            q.append(packet)
            guard q.count > Self.queueLimit else { return false }
            q.removeFirst(q.count - Self.queueLimit)
            return true
        }
        if overflow {
            overflowed.store(true, ordering: .releasing)
            stats.withLock {
                $0.queueOverflow += 1; $0.waitingForKeyframe = true
            }
        }
        wakeup.signal()
    }

    private func run(_ decoder: VideoDecoder) {
        var buffer = VideoFrameBuffer(codec: codec, holdMicros: retransmissionTiming.holdMicros)
        var timeout = Duration.milliseconds(200)
        while running.load(ordering: .acquiring) {
            let millis = Int(max(1, min(200, timeout.inMilliseconds)))
            _ = wakeup.wait(timeout: .now() + .milliseconds(millis))
            let arrived = queue.withLock { q -> [RTPPacket] in
                defer { q = [] }; return q
            }
            if overflowed.exchange(false, ordering: .acquiringAndReleasing) { buffer.lostPackets() }
            let now = ContinuousClock.now
            buffer.holdMicros = retransmissionTiming.holdMicros
            for packet in arrived { buffer.insert(packet, now: now) }
            buffer.release(now: now) { decode($0, with: decoder) }
            timeout = buffer.nextDeadline.map { $0 - now } ?? .milliseconds(200)
            let c = buffer.counters, waiting = buffer.waitingForKeyframe, hold = buffer.holdMicros
            stats.withLock { s in
                s.packets = c.packets
                s.framesAssembled = c.framesAssembled
                s.keyframesAssembled = c.keyframesAssembled
                s.framesDropped = c.framesGivenUp
                s.gaps = c.gaps
                s.malformed = c.malformed
                s.packetsRecovered = c.packetsRecovered
                s.packetsGivenUp = c.packetsGivenUp
                s.framesGivenUp = c.framesGivenUp
                s.framesSkippedForKeyframe = c.framesSkippedForKeyframe
                s.restarts = c.restarts
                s.holdMs = Int(hold / 1000)
                s.waitingForKeyframe = waiting
                if let error = c.lastError { s.lastError = error }
            }
        }
        finished.signal()
    }

    private func decode(_ frame: DepayloadedFrame, with decoder: VideoDecoder) -> VideoFrameBuffer.Decoded {
        if wedged.load(ordering: .acquiring) {
            stats.withLock { $0.framesSwallowed += 1 }
            return .nothing
        }
        do {
            guard let picture = try decoder.decode(frame.bytes) else { return .nothing }
            stats.withLock { s in
                s.framesDecoded += 1
                if frame.isKeyframe { s.keyframesDecoded += 1 }
                s.width = picture.width
                s.height = picture.height
            }
            latest.withLock { $0 = picture }
            onPicture?(picture)
            return .picture
        } catch {
            stats.withLock { s in
                s.decodeErrors += 1
                s.lastError = "\(error)"
            }
            logger.debug("a received \(codec) frame did not decode: \(error)")
            return .failed
        }
    }
}
