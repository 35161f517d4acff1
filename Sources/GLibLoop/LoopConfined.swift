import ShareCore

/// A value that belongs to one `GLibLoop`'s thread: it may be made anywhere, but from then on it
/// is read and changed only on that thread (in work given to `invoke`/`perform`, or in a C
/// callback the loop runs), and it is released there. The box itself may cross threads, so the
/// loop's work can be written as `@Sendable` closures that carry it.
///
/// Debug builds check every touch: off the loop thread (while the loop runs) is a programming
/// error and stops the process with a message naming the loop and the value's type. Once the loop
/// has stopped, no other thread can be touching the value, and its owner may tear it down anywhere.
///
/// `@unchecked Sendable` is sound because the only mutable state, `stored`, is touched on the
/// loop's one thread (checked above) or after that thread has ended.
public final class LoopConfined<Value>: @unchecked Sendable {
    public let loop: GLibLoop
    private var stored: Value?

    /// Confines `value` to `loop`: from now on it is used on that loop's thread only (a callback
    /// owner may box itself, which is why `value` is not a `sending` parameter).
    public init(_ value: Value, on loop: GLibLoop) {
        self.loop = loop
        stored = Optional(value)
    }

    /// The value, on the loop thread only.
    public var value: Value {
        get {
            checkThread()
            return stored!
        }
        set {
            checkThread()
            stored = newValue
        }
    }

    /// Runs `work` with the value on the loop thread (inline when already there). Dropped when the
    /// loop has stopped.
    public func invoke(_ work: @escaping @Sendable (Value) -> Void) {
        loop.invoke { work(self.value) }
    }

    /// Runs `work` with the value on the loop thread and returns its result to the awaiting
    /// caller; throws `GLibLoopError.stopped` when the loop stops first (`GLibLoop.perform`).
    public func perform<T: Sendable>(_ work: @escaping @Sendable (Value) throws -> T) async throws -> T {
        try await loop.perform { try work(self.value) }
    }

    /// Runs `work` with the value on the loop thread and blocks until it has
    /// (`GLibLoop.invokeAndWait`: from plain threads only).
    public func invokeAndWait<T: Sendable>(_ work: @escaping @Sendable (Value) throws -> T) throws -> T {
        try loop.invokeAndWait { try work(self.value) }
    }

    private func checkThread() {
        assert(
            loop.isLoopThread || loop.hasStopped,
            "\(Value.self) belongs to the \(loop.name) loop's thread and was touched from another thread")
    }

    deinit {
        // Released on the loop thread it belongs to. A stopped loop drops the work, and the value
        // goes here, where nothing else can be using it any more.
        // Moved straight into the hand-off: a local binding would keep a second reference here,
        // and if the loop thread dropped its one first, the value was released on this thread
        // after all (seen under ThreadSanitizer's slower timing).
        guard !loop.isLoopThread, stored != nil else { return }
        let handOff = HandOff(stored.take())
        loop.invoke { _ = handOff.take() }
    }
}
