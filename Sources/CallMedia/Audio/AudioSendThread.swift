import Foundation
import RTPWire
import ShareCore
import Synchronization
import VideoSend

/// Audio out on its own thread: each 20 ms frame from a source (`AudioFrameSource`: the synthetic
/// tone, or a microphone through PipeWire) is encoded with Opus and sent on its RTP stream. The
/// level of what is sent is metered (dBFS), and 5 s under −90 dBFS says "Your microphone isn't
/// picking anything up" (`SilenceMonitor`). A frame that misses its send deadline (100 ms after it
/// ended) is dropped and counted, not sent late; its RTP timestamp is skipped.
public final class AudioSendThread: Sendable {
    public struct Counters: Sendable, Equatable {
        public var framesEncoded = 0
        public var framesDropped = 0
        public var bytesEncoded = 0
        public var levelDbfs = AudioLevel.silence
        /// Under −90 dBFS for 5 s while sending.
        public var silent = false
        public var sourceFailure: String?
    }

    /// The send deadline: a frame that ended more than this long ago is dropped.
    public static var sendDeadline: Duration { .milliseconds(100) }

    private let sender: RTPStreamSender
    private let counters = Locked(Counters())
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    public let source: any AudioFrameSource
    private let logger: Logger

    public init(sender: RTPStreamSender, source: any AudioFrameSource, logger: Logger) {
        self.sender = sender
        self.source = source
        self.logger = logger
    }

    /// `toneLevelDbfs` nil sends digital silence.
    public convenience init(sender: RTPStreamSender, toneLevelDbfs: Double? = -20, logger: Logger) {
        self.init(sender: sender, source: SyntheticAudioSource(levelDbfs: toneLevelDbfs), logger: logger)
    }

    public var snapshot: Counters { counters.withLock { $0 } }

    public func start() throws {
        // Made here so a libopus failure is reported to the caller, then moved into the thread.
        let encoder = try OpusAudioEncoder(channels: source.channels, bitrate: source.channels == 2 ? 64_000 : 48_000)
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let handOff = HandOff(encoder)
        let thread = Thread { [self] in run(handOff.take()!) }
        thread.name = "audio-send"
        thread.start()
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    /// True when a frame that ended at `end` can no longer be sent at `now`.
    public static func missedDeadline(end: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        now - end > sendDeadline
    }

    private func run(_ encoder: OpusAudioEncoder) {
        defer { finished.signal() }
        do {
            try source.start()  // a microphone connects to PipeWire here, off any actor
        } catch {
            logger.error("audio: \(source.description) could not start: \(error)")
            counters.withLock { $0.sourceFailure = "\(error)" }
            running.store(false, ordering: .releasing)
            return
        }
        defer { source.stop() }
        let payloader = OpusPayloader()
        var timestamp = UInt32.random(in: 0...UInt32.max)
        var first = true
        var silence = SilenceMonitor()
        while running.load(ordering: .acquiring) {
            guard let frame = source.nextFrame() else { continue }
            defer { timestamp &+= UInt32(OpusAudioEncoder.frameSamples) }
            if Self.missedDeadline(end: frame.end, now: .now) {
                counters.withLock { $0.framesDropped += 1 }
                continue
            }
            do {
                let packet = try encoder.encode(frame.samples)
                let unit = try payloader.payload(packet, startsTalkspurt: first)
                first = false
                sender.send([unit], timestamp: timestamp, nowMicros: Clocks.monotonicMicros())
                let level = AudioLevel.peakDbfs(frame.samples)
                switch silence.sent(levelDbfs: level, now: .now) {
                case .becameSilent:
                    logger.warning("\(SilenceMonitor.message) (\(source.description), under −90 dBFS for 5 s)")
                case .heardAgain: logger.info("audio: \(source.description) is picking up sound again")
                case nil: break
                }
                counters.withLock { c in
                    c.framesEncoded += 1
                    c.bytesEncoded += packet.count
                    c.levelDbfs = level
                    c.silent = silence.isSilent
                }
            } catch {
                logger.warning("audio frame not sent: \(error)")
                counters.withLock { $0.framesDropped += 1 }
            }
        }
    }
}
