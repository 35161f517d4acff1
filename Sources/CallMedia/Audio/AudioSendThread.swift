import Foundation
import RTPWire
import ShareCore
import Synchronization
import VideoSend

/// Audio out on its own thread: each 20 ms frame from a source (`AudioFrameSource`: the synthetic
/// tone, or a microphone through PipeWire) is encoded with Opus and sent on its RTP stream. The
/// level of what is captured is metered (dBFS), and 5 s under −90 dBFS while unmuted says "Your
/// microphone isn't picking anything up" (`SilenceMonitor`). Muted (`AudioMute`), digital silence
/// is encoded in place of the capture: the stream and the meter go on. The speaking indicator
/// reads the meter at 10 Hz (the loudest of each five frames sent). At the transition into digital
/// silence (a whole frame of exact zeros: a muted microphone, a source gone quiet) the encoder is
/// reopened once, so real three-byte silence packets go out instead of its tonal history fading;
/// the first packet after the reopen is marked (the RTP marker, a new talkspurt) and a receiver
/// resets its decoder there, keeping the packet's place in the timeline. A frame that misses its send
/// deadline (100 ms after it ended) is dropped and counted, not sent late; its RTP timestamp is
/// skipped.
public final class AudioSendThread: Sendable {
    public struct Counters: Sendable, Equatable {
        public var framesEncoded = 0
        public var framesDropped = 0
        public var bytesEncoded = 0
        /// What is captured (what is sent, unless muted).
        public var levelDbfs = AudioLevel.silence
        /// Under −90 dBFS for 5 s while sending unmuted.
        public var silent = false
        /// Sending digital silence for the mute switch.
        public var muted = false
        /// What is sent lights the speaking indicator (never while muted).
        public var speaking = false
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
    private let mute: AudioMute
    private let bitrate: Int

    /// 64 kbit/s: speech, mono or stereo (DESIGN.md "Audio"); `--audio-bitrate` raises it for a
    /// screen's own sound, up to `highestBitrate`.
    public static let defaultBitrate = 64_000
    public static let lowestBitrate = 16_000
    public static let highestBitrate = 128_000

    public init(
        sender: RTPStreamSender, source: any AudioFrameSource, logger: Logger, mute: AudioMute = .shared,
        bitrate: Int = AudioSendThread.defaultBitrate
    ) {
        self.sender = sender
        self.source = source
        self.logger = logger
        self.mute = mute
        self.bitrate = min(Self.highestBitrate, max(Self.lowestBitrate, bitrate))
    }

    /// `toneLevelDbfs` nil sends digital silence.
    public convenience init(sender: RTPStreamSender, toneLevelDbfs: Double? = -20, logger: Logger) {
        self.init(sender: sender, source: SyntheticAudioSource(levelDbfs: toneLevelDbfs), logger: logger)
    }

    public var snapshot: Counters { counters.withLock { $0 } }

    public func start() throws {
        // Made here so a libopus failure is reported to the caller, then moved into the thread.
        let encoder = try OpusAudioEncoder(channels: source.channels, bitrate: bitrate)
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
        var speaking = SpeakingMeter()
        var inDigitalSilence = false
        while running.load(ordering: .acquiring) {
            guard let frame = source.nextFrame() else { continue }
            defer { timestamp &+= UInt32(OpusAudioEncoder.frameSamples) }
            if Self.missedDeadline(end: frame.end, now: .now) {
                counters.withLock { $0.framesDropped += 1 }
                continue
            }
            do {
                let muted = mute.isMuted
                let samples = muted ? [Int16](repeating: 0, count: frame.samples.count) : frame.samples
                let silent = samples.allSatisfy { $0 == 0 }
                let reopened = silent && !inDigitalSilence && !first
                if reopened { encoder.reset() }
                inDigitalSilence = silent
                let packet = try encoder.encode(samples)
                let unit = try payloader.payload(packet, startsTalkspurt: first || reopened)
                first = false
                sender.send([unit], timestamp: timestamp, nowMicros: Clocks.monotonicMicros())
                let level = AudioLevel.peakDbfs(frame.samples)
                if muted {
                    silence = SilenceMonitor()  // a muted microphone is not a dead one
                } else {
                    switch silence.sent(levelDbfs: level, now: .now) {
                    case .becameSilent:
                        logger.warning("\(SilenceMonitor.message) (\(source.description), under −90 dBFS for 5 s)")
                    case .heardAgain: logger.info("audio: \(source.description) is picking up sound again")
                    case nil: break
                    }
                }
                speaking.frame(muted ? AudioLevel.silence : level, now: .now)
                counters.withLock { c in
                    c.framesEncoded += 1
                    c.bytesEncoded += packet.count
                    c.levelDbfs = level
                    c.silent = silence.isSilent
                    c.muted = muted
                    c.speaking = speaking.isSpeaking
                }
            } catch {
                logger.warning("audio frame not sent: \(error)")
                counters.withLock { $0.framesDropped += 1 }
            }
        }
    }
}
