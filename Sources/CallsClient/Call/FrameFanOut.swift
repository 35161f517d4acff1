import ShareCore
import Synchronization

/// One frame source sent on several connections (a room call's camera goes to every participant):
/// each connection's camera section takes a `branch()`. The source runs while at least one branch
/// is started, and each frame goes to every started branch (frames are values: nothing is copied
/// until an encoder converts its own).
///
/// Thread-safe: frames arrive on the source's thread; branches start and stop from anywhere.
final class FrameFanOut: Sendable {
    private struct State {
        var sinks: [Int: @Sendable (VideoFrame) -> Void] = [:]
        var next = 0
        var running = false
    }

    private let source: any VideoFrameSource
    private let state = Mutex(State())

    init(_ source: any VideoFrameSource) {
        self.source = source
    }

    /// A source of its own for one connection.
    func branch() -> any VideoFrameSource { Branch(fanOut: self) }

    private func add(_ deliver: @escaping @Sendable (VideoFrame) -> Void) -> Int {
        let (key, first) = state.withLock { s -> (Int, Bool) in
            s.next += 1
            s.sinks[s.next] = deliver
            defer { s.running = true }
            return (s.next, !s.running)
        }
        if first {
            source.start { [self] frame in
                // Under the lock, so no frame reaches a branch after its stop returned (delivering is a queue push).
                state.withLock { s in for deliver in s.sinks.values { deliver(frame) } }
            }
        }
        return key
    }

    private func remove(_ key: Int) {
        let last = state.withLock { s -> Bool in
            guard s.sinks.removeValue(forKey: key) != nil, s.sinks.isEmpty, s.running else { return false }
            s.running = false
            return true
        }
        if last { source.stop() }
    }

    private final class Branch: VideoFrameSource {
        private let fanOut: FrameFanOut
        private let key = Mutex<Int?>(nil)

        init(fanOut: FrameFanOut) { self.fanOut = fanOut }

        func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
            let added = fanOut.add(deliver)
            let previous = key.withLock { k -> Int? in
                defer { k = added }
                return k
            }
            if let previous { fanOut.remove(previous) }
        }

        /// No frame reaches this branch after it returns.
        func stop() {
            if let k = key.withLock({ k -> Int? in defer { k = nil }; return k }) { fanOut.remove(k) }
        }
    }
}
