/// Where a source's frames go, kept under a lock by the source.
///
/// A struct, never a bare closure in the lock: a generic lock (`Locked`, `Mutex`) whose value is
/// itself a function type (`Locked<((VideoFrame) -> Void)?>`) reabstracts the stored closure on every `withLock`, wrapping
/// it in two more thunks each time, so the closure grows by two contexts with every frame. Calls
/// get slower frame by frame, and releasing the chain (a stop, hours later) overflows the stack.
/// A closure stored in a struct's field keeps its own form.
public struct FrameSink: Sendable {
    public var deliver: (@Sendable (VideoFrame) -> Void)?

    public init(_ deliver: (@Sendable (VideoFrame) -> Void)? = nil) { self.deliver = deliver }
}
