import RTPWire
import ShareCore
import Synchronization

/// One incoming Opus stream: each packet is decoded as it arrives and the level of what was
/// decoded is measured (peak dBFS of the last 20 ms frame, and the loudest since the last look).
/// A sequence gap is concealed with one decoded frame per missing packet (up to five).
///
/// Decoding runs on the transport's thread (the GLib loop): an Opus frame decodes in a fraction of
/// a millisecond, less than queueing it to another thread would cost. There is no jitter buffer or
/// playout yet: packets are decoded in arrival order. Thread-safe: the decoder sits behind a lock.
public final class AudioReceiver: Sendable {
    public struct Counters: Sendable, Equatable {
        public var packets = 0
        public var framesDecoded = 0
        public var framesConcealed = 0
        public var samplesDecoded = 0
        public var decodeErrors = 0
        public var levelDbfs = AudioLevel.silence
        /// The loudest 20 ms frame decoded so far.
        public var peakDbfs = AudioLevel.silence
    }

    private struct Decoding: ~Copyable {
        let decoder: OpusAudioDecoder
        var lastSequence: UInt16?
        var counters = Counters()
    }

    private let state: Mutex<Decoding>

    public init(channels: Int = 2) throws {
        state = Mutex(Decoding(decoder: try OpusAudioDecoder(channels: channels)))
    }

    public var counters: Counters { state.withLock { $0.counters } }

    public func receive(_ packet: RTPPacket) {
        state.withLock { s in
            s.counters.packets += 1
            if let last = s.lastSequence {
                let missing = Int(packet.sequenceNumber &- last) - 1
                guard missing >= 0, missing < 0x8000 else { return }  // late or duplicate
                for _ in 0..<min(missing, 5) where (try? s.decoder.decode(nil)) != nil { s.counters.framesConcealed += 1 }
            }
            s.lastSequence = packet.sequenceNumber
            do {
                let pcm = try s.decoder.decode(packet.payload)
                let level = AudioLevel.peakDbfs(pcm)
                s.counters.framesDecoded += 1
                s.counters.samplesDecoded += pcm.count / s.decoder.channels
                s.counters.levelDbfs = level
                s.counters.peakDbfs = max(s.counters.peakDbfs, level)
            } catch {
                s.counters.decodeErrors += 1
            }
        }
    }
}
