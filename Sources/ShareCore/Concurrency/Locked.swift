#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a lock, with the API of `Synchronization.Mutex`:
///
/// ```swift
/// private let state = Locked(State())
/// let due = state.withLock { $0.takeDue(now: now) }
/// ```
///
/// It is a pthread mutex rather than `Mutex` because ThreadSanitizer has to see the locking:
/// on Linux `Mutex` waits on a futex of its own, which ThreadSanitizer does not take for a lock, so
/// every access inside a `withLock` body was reported as a race (`make sanitize` read about a
/// hundred of them). pthread mutexes are intercepted, so under `make sanitize` a race is a race.
///
/// `@unchecked Sendable` for the reason `Mutex` is: the value is only reached under the lock, and
/// it goes in and out as `sending`, so the caller keeps no reference to it.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while no other thread holds the lock. Not reentrant: calling
    /// `withLock` on the same lock from inside `body` deadlocks, as with `Mutex`.
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
