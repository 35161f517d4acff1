import Foundation
import RTPWire
import ShareCore
import Synchronization

/// One incoming Opus stream: packets go into the jitter buffer (`AudioJitterBuffer`) as they
/// arrive; a playout thread takes one 20 ms frame from it every 20 ms, decodes it (or conceals a
/// missing one with Opus PLC), measures its level (peak dBFS of the frame, and the loudest so far)
/// and plays it out.
///
/// Playout: the decoded samples are counted at the playout clock's pace (`samplesPlayed`); they
/// are not written to a PipeWire output yet (`output` says so).
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
        public var levelDbfs = AudioLevel.silence
        /// The loudest 20 ms frame decoded so far.
        public var peakDbfs = AudioLevel.silence
        /// The loudest 20 ms frame of the last second, and of the last three (a voice or a
        /// beep that pauses is still heard).
        public var recentPeakDbfs = AudioLevel.silence
        public var hearingPeakDbfs = AudioLevel.silence
    }

    /// Where decoded audio goes.
    public static let output = "counted (no PipeWire playback yet)"

    private struct Shared: Sendable {
        var buffer = AudioJitterBuffer<[UInt8]>()
        var counters = Counters()
    }

    private let shared = Mutex(Shared())
    private let decoderBox: DecoderHandOff
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let channels: Int

    public init(channels: Int = 2) throws {
        self.channels = channels
        decoderBox = DecoderHandOff(try OpusAudioDecoder(channels: channels))
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
            s.buffer.insert(sequence: packet.sequenceNumber, payload: packet.payload, now: now)
        }
    }

    private func playout(_ decoder: OpusAudioDecoder?) {
        defer { finished.signal() }
        guard let decoder else { return }
        let clock = ContinuousClock()
        var tick = clock.now
        var levels: [Double] = []  // one per 20 ms tick, the last three seconds
        while running.load(ordering: .acquiring) {
            tick += .milliseconds(20)
            let wait = tick - clock.now
            if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds)) }
            if clock.now - tick > .milliseconds(200) { tick = clock.now }  // fell far behind (suspended): catch up
            let pull = shared.withLock { $0.buffer.pull(now: clock.now) }
            var pcm: [Int16]?
            var failed = false
            switch pull {
            case .frame(let payload):
                do { pcm = try decoder.decode(payload) } catch { failed = true }
            case .conceal:
                pcm = try? decoder.decode(nil)
            case .buffering:
                break
            }
            let level = pcm.map { AudioLevel.peakDbfs($0) }
            levels.append(level ?? AudioLevel.silence)
            if levels.count > 150 { levels.removeFirst(levels.count - 150) }
            let recent = levels.suffix(50).max() ?? AudioLevel.silence, hearing = levels.max() ?? AudioLevel.silence
            shared.withLock { s in
                let b = s.buffer.counters
                s.counters.underruns = b.underruns
                s.counters.droppedLate = b.droppedLate
                s.counters.droppedOverflow = b.droppedOverflow
                s.counters.jitterTargetMs = Int(s.buffer.target.components.attoseconds / 1_000_000_000_000_000
                                                + s.buffer.target.components.seconds * 1000)
                s.counters.samplesPlayed += 960
                s.counters.recentPeakDbfs = recent
                s.counters.hearingPeakDbfs = hearing
                if failed { s.counters.decodeErrors += 1 }
                guard let pcm, let level else { return }
                if case .conceal = pull { s.counters.framesConcealed += 1 } else { s.counters.framesDecoded += 1 }
                s.counters.samplesDecoded += pcm.count / channels
                s.counters.levelDbfs = level
                s.counters.peakDbfs = max(s.counters.peakDbfs, level)
            }
        }
    }
}

/// Hands the thread-confined decoder to the one playout thread.
private final class DecoderHandOff: @unchecked Sendable {
    private var decoder: OpusAudioDecoder?
    init(_ decoder: OpusAudioDecoder) { self.decoder = decoder }
    func take() -> OpusAudioDecoder? {
        defer { decoder = nil }
        return decoder
    }
}
