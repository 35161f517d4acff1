import Dispatch

/// The hand-off between a capture thread and a sender: six slots, the newest frame wins (a full
/// queue drops its oldest), and a frame more than 100 ms old when taken is dropped as late.
/// Times are the frames' `captureMicros` against the `now` the caller passes, so the rules are
/// testable without a clock. Safe from any thread; `take(waitingUpTo:now:)` blocks, so call it only
/// from a thread of one's own (an encoder thread), never from an actor or the cooperative pool.
public final class FrameQueue: Sendable {
    public static let defaultCapacity = 6
    public static let defaultMaxAgeMicros: Int64 = 100_000

    public struct Counters: Sendable, Hashable {
        public var pushed = 0
        public var taken = 0
        public var droppedFull = 0
        public var droppedLate = 0
    }

    private struct State {
        var frames: [VideoFrame] = []
        var counters = Counters()
        var closed = false
    }

    private let state = Locked(State())
    private let signal = DispatchSemaphore(value: 0)
    public let capacity: Int
    public let maxAgeMicros: Int64

    public init(capacity: Int = FrameQueue.defaultCapacity, maxAgeMicros: Int64 = FrameQueue.defaultMaxAgeMicros) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.maxAgeMicros = maxAgeMicros
    }

    public func push(_ frame: VideoFrame) {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.frames.count == capacity {
                state.frames.removeFirst()
                state.counters.droppedFull += 1
            }
            state.frames.append(frame)
            state.counters.pushed += 1
            return true
        }
        if accepted { signal.signal() }
    }

    /// The oldest frame that is not late, dropping late ones on the way; nil when none is waiting.
    public func take(now nowMicros: Int64) -> VideoFrame? {
        state.withLock { state in
            while !state.frames.isEmpty {
                let frame = state.frames.removeFirst()
                if nowMicros - frame.captureMicros > maxAgeMicros {
                    state.counters.droppedLate += 1
                    continue
                }
                state.counters.taken += 1
                return frame
            }
            return nil
        }
    }

    /// Waits up to `timeout` for a frame that is not late. `now` is read after each wake-up.
    public func take(waitingUpTo timeout: Duration, now: () -> Int64) -> VideoFrame? {
        let nanos = timeout.inNanoseconds
        let deadline = DispatchTime.now() + .nanoseconds(Int(nanos))
        while true {
            if let frame = take(now: now()) { return frame }
            if state.withLock({ $0.closed }) { return nil }
            if signal.wait(timeout: deadline) == .timedOut { return take(now: now()) }
        }
    }

    /// Wakes any waiter and refuses further frames.
    public func close() {
        state.withLock { $0.closed = true }
        signal.signal()
    }

    public var counters: Counters { state.withLock { $0.counters } }
    public var count: Int { state.withLock { $0.frames.count } }
}
