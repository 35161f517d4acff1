import Foundation
import RTPWire
import ShareCore
import Synchronization

/// One incoming Opus stream: packets go into the jitter buffer (`AudioJitterBuffer`) as they
/// arrive; a playout thread takes one 20 ms frame from it at a time, decodes it (or conceals a
/// missing one with Opus PLC), measures its level (peak dBFS of the frame, and the loudest so far)
/// and plays it out.
///
/// Playout: into the process's PipeWire playback stream (`AudioOutput`, mixed with the other
/// participants) at that stream's pace; without one, the samples are counted at the playout
/// thread's own 20 ms pace (`samplesPlayed`). `output` says which.
///
/// Thread-safe: the buffer and counters sit behind a lock, the decoder belongs to the playout
/// thread. `start` begins the playout thread, `stop` joins it.
public final class AudioReceiver: Sendable {
    public struct Counters: Sendable, Equatable {
        public var packets = 0
        public var framesDecoded = 0
        public var framesConcealed = 0
        public var samplesDecoded = 0
        /// Samples (per channel) the playout clock has played, silence included.
        public var samplesPlayed = 0
        public var decodeErrors = 0
        public var underruns = 0
        public var droppedLate = 0
        public var droppedOverflow = 0
        public var jitterTargetMs = 60
        /// What the jitter buffer holds now; silence played for the sender's timestamp gaps; times
        /// the stream started again.
        public var bufferedMs = 0
        public var silenceInserted = 0
        public var epochs = 0
        public var levelDbfs = AudioLevel.silence
        /// The loudest 20 ms frame decoded so far.
        public var peakDbfs = AudioLevel.silence
        /// The loudest 20 ms frame of the last second, and of the last three (a voice or a
        /// beep that pauses is still heard).
        public var recentPeakDbfs = AudioLevel.silence
        public var hearingPeakDbfs = AudioLevel.silence
        /// What we decode of them lights the speaking indicator (read at 10 Hz).
        public var speaking = false
    }

    /// Where decoded audio goes: `pipewire: NODE`, or `counted (no PipeWire output: WHY)`.
    public static var output: String { AudioOutput.shared.status }

    private struct Shared: Sendable {
        var buffer = AudioJitterBuffer<OpusFrame>()
        var counters = Counters()
    }

    private let shared = Locked(Shared())
    private let decoderBox: HandOff<OpusAudioDecoder>
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let channels: Int
    private let output: AudioOutput?
    private let logger: Logger

    /// `output` nil: count only (no PipeWire).
    public init(channels: Int = 2, output: AudioOutput? = .shared, logger: Logger) throws {
        self.channels = channels
        self.output = output
        self.logger = logger
        decoderBox = HandOff(try OpusAudioDecoder(channels: channels))
    }

    public var counters: Counters { shared.withLock { $0.counters } }

    /// Starts the playout thread (once).
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in playout(decoderBox.take()) }
        thread.name = "audio-playout"
        thread.start()
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    /// One packet (on the transport's thread): into the jitter buffer.
    public func receive(_ packet: RTPPacket) {
        let now = ContinuousClock.now
        shared.withLock { s in
            s.counters.packets += 1
            s.buffer.insert(
                sequence: packet.sequenceNumber, timestamp: packet.timestamp, source: packet.ssrc,
                payload: OpusFrame(bytes: packet.payload, resetsDecoder: packet.marker), now: now)
        }
    }

    private func playout(_ decoder: OpusAudioDecoder?) {
        defer { finished.signal() }
        guard let decoder else { return }
        let member = output?.join(logger: logger)
        defer { if let member { output?.leave(member) } }
        let clock = ContinuousClock()
        var tick = clock.now
        var levels: [Double] = []  // one per 20 ms frame, the last three seconds
        var speaking = SpeakingMeter()
        while running.load(ordering: .acquiring) {
            if let output, let member, output.isLive {
                // The PipeWire stream sets the pace: refill this participant's queue each time it
                // takes from it.
                _ = member.wake.wait(timeout: .now() + .milliseconds(100))
                while running.load(ordering: .acquiring), output.isLive, output.queued(member) < output.queueTarget() {
                    output.push(member, playOneFrame(decoder, clock: clock, levels: &levels, speaking: &speaking))
                }
                tick = clock.now
                continue
            }
            // No output: our own 20 ms clock, and the frames are only counted.
            tick += .milliseconds(20)
            let wait = tick - clock.now
            if wait > .zero { Thread.sleep(forTimeInterval: wait.inSeconds) }
            if clock.now - tick > .milliseconds(200) { tick = clock.now }  // fell far behind (suspended): catch up
            _ = playOneFrame(decoder, clock: clock, levels: &levels, speaking: &speaking)
        }
    }

    /// Takes one 20 ms frame from the jitter buffer, decodes (or conceals) it, measures it and
    /// counts it as played; returns it (silence while buffering) in the output's channel layout.
    private func playOneFrame(
        _ decoder: OpusAudioDecoder, clock: ContinuousClock, levels: inout [Double], speaking: inout SpeakingMeter
    ) -> [Int16] {
        let pull = shared.withLock { $0.buffer.pull(now: clock.now) }
        var pcm: [Int16]?
        var failed = false
        switch pull {
        case .frame(let payload):
            // The first packet after the sender reopened its encoder (digital silence began):
            // the prediction starts afresh, the timeline goes on.
            if payload.resetsDecoder { decoder.reset() }
            do { pcm = try decoder.decode(payload.bytes) } catch { failed = true }
        case .conceal:
            pcm = try? decoder.decode(nil)
        case .buffering, .silence:
            break
        }
        let level = pcm.map { AudioLevel.peakDbfs($0) }
        levels.append(level ?? AudioLevel.silence)
        if levels.count > 150 { levels.removeFirst(levels.count - 150) }
        let recent = levels.suffix(50).max() ?? AudioLevel.silence, hearing = levels.max() ?? AudioLevel.silence
        speaking.frame(level ?? AudioLevel.silence, now: clock.now)
        let isSpeaking = speaking.isSpeaking
        shared.withLock { s in
            let b = s.buffer.counters
            s.counters.underruns = b.underruns
            s.counters.droppedLate = b.droppedLate
            s.counters.droppedOverflow = b.droppedOverflow
            s.counters.jitterTargetMs = Int(s.buffer.target.inMilliseconds)
            s.counters.bufferedMs = Int(s.buffer.held.inMilliseconds)
            s.counters.silenceInserted = b.silenceInserted
            s.counters.epochs = b.epochs
            s.counters.samplesPlayed += 960
            s.counters.recentPeakDbfs = recent
            s.counters.hearingPeakDbfs = hearing
            s.counters.speaking = isSpeaking
            if failed { s.counters.decodeErrors += 1 }
            guard let pcm, let level else { return }
            if case .conceal = pull { s.counters.framesConcealed += 1 } else { s.counters.framesDecoded += 1 }
            s.counters.samplesDecoded += pcm.count / channels
            s.counters.levelDbfs = level
            s.counters.peakDbfs = max(s.counters.peakDbfs, level)
        }
        return AudioReceiver.frame(pcm, channels: channels, outputChannels: AudioOutput.channels)
    }

    /// A decoded frame in the output's layout: silence for nil, mono spread to both channels.
    static func frame(_ pcm: [Int16]?, channels: Int, outputChannels: Int) -> [Int16] {
        let frames = OpusAudioEncoder.frameSamples
        guard let pcm, pcm.count == frames * channels else {
            return [Int16](repeating: 0, count: frames * outputChannels)
        }
        if channels == outputChannels { return pcm }
        var out = [Int16](repeating: 0, count: frames * outputChannels)
        for i in 0..<frames {
            for c in 0..<outputChannels { out[i * outputChannels + c] = pcm[i * channels + min(c, channels - 1)] }
        }
        return out
    }
}

/// One Opus packet in the jitter buffer, and whether it starts a new prediction (the RTP marker:
/// the first packet of the stream, or the first after the sender reopened its encoder at
/// digital silence).
public struct OpusFrame: Sendable, Equatable {
    public var bytes: [UInt8]
    public var resetsDecoder: Bool

    public init(bytes: [UInt8], resetsDecoder: Bool = false) {
        self.bytes = bytes
        self.resetsDecoder = resetsDecoder
    }
}
