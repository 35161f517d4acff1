import Foundation
import RTPWire
import ShareCore
import Synchronization
import VideoSend

/// Audio out on its own thread: every 20 ms a frame of the synthetic tone (or silence) is encoded
/// with Opus and sent on its RTP stream. The level of what is sent is metered (dBFS). Frames that
/// fall more than 100 ms behind their deadline are dropped and counted, not sent late.
public final class AudioSendThread: Sendable {
    public struct Counters: Sendable, Equatable {
        public var framesEncoded = 0
        public var framesDropped = 0
        public var bytesEncoded = 0
        public var levelDbfs = AudioLevel.silence
    }

    private let sender: RTPStreamSender
    private let counters = Mutex(Counters())
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let toneLevel: Double?
    private let logger: Logger

    /// `toneLevelDbfs` nil sends digital silence.
    public init(sender: RTPStreamSender, toneLevelDbfs: Double? = -20, logger: Logger) {
        self.sender = sender
        toneLevel = toneLevelDbfs
        self.logger = logger
    }

    public var snapshot: Counters { counters.withLock { $0 } }

    public func start() throws {
        // Made here so a libopus failure is reported to the caller, then moved into the thread.
        let encoder = try OpusAudioEncoder(channels: 2, bitrate: 64_000)
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let box = EncoderBox(encoder)
        let thread = Thread { [self] in run(box.take()) }
        thread.name = "audio-send"
        thread.start()
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    private func run(_ encoder: OpusAudioEncoder) {
        var tone = SyntheticTone(frequency: 440, levelDbfs: toneLevel ?? -120, channels: 2)
        let silence = [Int16](repeating: 0, count: OpusAudioEncoder.frameSamples * 2)
        let payloader = OpusPayloader()
        let origin = Clocks.monotonicMicros()
        var timestamp = UInt32.random(in: 0...UInt32.max)
        var frame: Int64 = 0
        var first = true
        while running.load(ordering: .acquiring) {
            let due = origin + frame * 20_000
            let now = Clocks.monotonicMicros()
            if due > now { usleep(useconds_t(due - now)) }
            defer { frame += 1; timestamp &+= UInt32(OpusAudioEncoder.frameSamples) }
            let pcm = toneLevel == nil ? silence : tone.nextFrame()
            if Clocks.monotonicMicros() - due > 100_000 {
                counters.withLock { $0.framesDropped += 1 }
                continue
            }
            do {
                let packet = try encoder.encode(pcm)
                let unit = try payloader.payload(packet, startsTalkspurt: first)
                first = false
                sender.send([unit], timestamp: timestamp, nowMicros: Clocks.monotonicMicros())
                let level = AudioLevel.peakDbfs(pcm)
                counters.withLock { c in
                    c.framesEncoded += 1
                    c.bytesEncoded += packet.count
                    c.levelDbfs = level
                }
            } catch {
                logger.warning("audio frame not sent: \(error)")
                counters.withLock { $0.framesDropped += 1 }
            }
        }
        finished.signal()
    }
}

/// Hands a thread-confined encoder to the one thread that will own it.
private final class EncoderBox: @unchecked Sendable {
    private var encoder: OpusAudioEncoder?
    init(_ encoder: OpusAudioEncoder) { self.encoder = encoder }
    func take() -> OpusAudioEncoder {
        defer { encoder = nil }
        return encoder!
    }
}
