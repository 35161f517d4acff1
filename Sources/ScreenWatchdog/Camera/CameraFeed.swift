import ScreenCapture
import ShareCore
import Synchronization

/// The director's one frame source: frames come from whichever camera is current, so a switch
/// feeds the same outgoing track and nothing renegotiates. Each open is a generation; frames of an
/// older one are dropped. Counters are atomics, read once a tick by the director.
public final class CameraFeed: Sendable {
    private let sink = Locked(FrameSink())
    private let generation = Atomic<Int>(0)
    private let framesOfGeneration = Atomic<UInt64>(0)
    private let firstFrameMicros = Atomic<Int64>(0)
    private let delivered = Atomic<UInt64>(0)

    public init() {}

    /// Frames delivered to the sink so far, across every camera.
    public var framesDelivered: UInt64 { delivered.load(ordering: .relaxed) }

    /// Where frames go; replaces the previous destination.
    public func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        sink.withLock { $0.deliver = deliver }
    }

    /// No frame reaches the destination after this returns.
    public func stop() {
        sink.withLock { $0.deliver = nil }
    }

    /// Frames from now on come only from generation `number`.
    func switchTo(generation number: Int) {
        generation.store(number, ordering: .releasing)
        framesOfGeneration.store(0, ordering: .relaxed)
        firstFrameMicros.store(0, ordering: .relaxed)
    }

    /// Frames that generation `number` has delivered (0 when it is not current).
    func frames(of number: Int) -> UInt64 {
        generation.load(ordering: .acquiring) == number ? framesOfGeneration.load(ordering: .relaxed) : 0
    }

    /// The capture time of the current generation's first frame, if one arrived.
    var firstFrameAt: Int64? {
        let value = firstFrameMicros.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Called on a capture thread for each frame of generation `number`.
    func push(_ frame: VideoFrame, generation number: Int) {
        guard generation.load(ordering: .acquiring) == number else { return }
        if framesOfGeneration.add(1, ordering: .relaxed).newValue == 1 {
            firstFrameMicros.store(max(1, frame.captureMicros), ordering: .relaxed)
        }
        sink.withLock { sink in
            guard let deliver = sink.deliver else { return }
            deliver(frame)
            delivered.add(1, ordering: .relaxed)
        }
    }
}
