import Foundation
import ShareCore

/// Where the audio send thread takes its 20 ms frames from: the synthetic tone (paced by its own
/// clock) or a microphone (paced by the capture). `nextFrame` blocks the send thread until a frame
/// is there, or returns nil after about 100 ms without one.
public protocol AudioFrameSource: Sendable {
    /// 1 (mono) or 2 (interleaved stereo).
    var channels: Int { get }
    /// What is sent, for the status line (e.g. "tone 440 Hz", "microphone: NODE").
    var description: String { get }
    func start() throws
    func nextFrame() -> CaptureFrameSlicer.Frame?
    func stop()
}

/// The synthetic 440 Hz tone (or digital silence with a nil level), stereo, one frame every 20 ms
/// on the send thread's clock; each frame's end is its due time.
public final class SyntheticAudioSource: AudioFrameSource {
    public let channels = 2
    private let levelDbfs: Double?
    private struct State { var tone: SyntheticTone; var origin: ContinuousClock.Instant?; var frame: Int64 = 0 }
    private let state: Locked<State>

    public init(levelDbfs: Double? = -20) {
        self.levelDbfs = levelDbfs
        state = Locked(State(tone: SyntheticTone(frequency: 440, levelDbfs: levelDbfs ?? -120, channels: 2)))
    }

    public var description: String { levelDbfs == nil ? "digital silence" : "tone 440 Hz" }

    public func start() {}
    public func stop() {}

    public func nextFrame() -> CaptureFrameSlicer.Frame? {
        let clock = ContinuousClock()
        let due = state.withLock { s -> ContinuousClock.Instant in
            let origin = s.origin ?? clock.now
            s.origin = origin
            defer { s.frame += 1 }
            return origin + .milliseconds(20 * s.frame)
        }
        let wait = due - clock.now
        if wait > .zero { Thread.sleep(forTimeInterval: wait.inSeconds) }
        let samples = state.withLock { s in
            levelDbfs == nil ? [Int16](repeating: 0, count: OpusAudioEncoder.frameSamples * 2) : s.tone.nextFrame()
        }
        return .init(samples: samples, end: due)
    }
}

/// A microphone through PipeWire: a capture stream (48 kHz mono S16) from the default source or
/// the node named, cut into 20 ms frames (`CaptureFrameSlicer`); frames captured before the send
/// thread's first read are discarded.
public final class MicrophoneSource: AudioFrameSource {
    public let channels = 1
    public let node: String?
    private let logger: Logger
    private let slicer = Locked(CaptureFrameSlicer(channels: 1))
    private let arrived = DispatchSemaphore(value: 0)
    private let stream = Locked<PipeWireAudioStream?>(nil)

    /// `node` nil: the default source.
    public init(node: String?, logger: Logger) {
        self.node = node
        self.logger = logger
    }

    public var description: String {
        let status = stream.withLock { $0?.status }
        guard let status else { return "microphone (not open)" }
        let cleaned = EchoCanceller.shared.nodes.source
        if status.streaming, status.peerNode == cleaned {
            // Through the echo canceller: the microphone is what feeds its capture stream.
            return "microphone: \(status.filteredNode ?? node ?? "the default source") (through \(cleaned))"
        }
        if status.streaming { return "microphone: \(status.peerNode ?? node ?? "an unnamed node")" }
        let asked = node.map { "node \($0)" } ?? "the default source"
        return "microphone: \(status.error.map { "\($0) (\(asked))" } ?? "waiting for \(asked)")"
    }

    public var counters: CaptureFrameSlicer.Counters { slicer.withLock { $0.counters } }

    /// Connects the capture stream (blocking: call from the send thread or another thread of its
    /// own): to the echo canceller's cleaned source when it runs (`EchoCanceller`), else to the
    /// microphone itself.
    public func start() throws {
        let echo = EchoCanceller.shared
        let opened = try PipeWireAudioStream(
            direction: .capture, channels: 1, target: echo.captureTarget(for: node, logger: logger),
            name: "sharectl-microphone", logger: logger, filter: (echo.nodes.source, echo.nodes.capture)
        ) { [weak self] samples in
            guard let self else { return }
            let now = ContinuousClock.now
            slicer.withLock { $0.append(UnsafeBufferPointer(samples), end: now) }
            arrived.signal()
        }
        stream.withLock { $0 = opened }
    }

    public func nextFrame() -> CaptureFrameSlicer.Frame? {
        if let frame = slicer.withLock({ $0.read(now: .now) }) { return frame }
        _ = arrived.wait(timeout: .now() + .milliseconds(100))
        return slicer.withLock { $0.read(now: .now) }
    }

    public func stop() {
        let closing = stream.withLock { s -> PipeWireAudioStream? in
            defer { s = nil }; return s
        }
        closing?.stop()
    }
}
