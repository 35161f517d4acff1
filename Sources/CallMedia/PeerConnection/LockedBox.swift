import Synchronization

/// A `Mutex` held by reference, for state a closure must capture before its owner is whole (or
/// that two owners share). Thread-safe.
final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<Result: Sendable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try mutex.withLock { (value: inout Value) throws(E) -> Result in try body(&value) }
    }
}
