import ShareCore

/// How long a receiver's keyframe request (PLI or FIR, once honoured) waited for the keyframe to
/// leave: the time from the request to the last packet of the next keyframe sent. Requests that
/// arrive while one is pending are answered by the same keyframe and timed from the first.
/// Thread-safe: requests come on the loop thread, keyframes leave on the encoder thread.
public final class KeyframeResponse: Sendable {
    public struct Figures: Sendable, Equatable {
        public var answered = 0
        public var lastMs: Double?
        public var maxMs: Double?
    }

    private struct State {
        var pendingSinceMicros: Int64?
        var figures = Figures()
    }

    private let state = Locked(State())

    public init() {}

    public func requested(nowMicros: Int64) {
        state.withLock { s in if s.pendingSinceMicros == nil { s.pendingSinceMicros = nowMicros } }
    }

    public func keyframeSent(nowMicros: Int64) {
        state.withLock { s in
            guard let since = s.pendingSinceMicros else { return }
            let ms = Double(nowMicros - since) / 1000
            s.pendingSinceMicros = nil
            s.figures.answered += 1
            s.figures.lastMs = ms
            s.figures.maxMs = max(s.figures.maxMs ?? 0, ms)
        }
    }

    public var figures: Figures { state.withLock { $0.figures } }
}
