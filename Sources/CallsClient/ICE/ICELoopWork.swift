import GLibLoop
import Synchronization

/// A value confined to the GLib loop thread, carried through `GLibLoop.invoke` closures.
/// `@unchecked` because the compiler cannot see the confinement: `value` is only touched inside
/// work that runs on the loop thread (or after the loop has stopped, when no other thread can).
struct ICELoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
}

extension GLibLoop {
    /// Runs `work` on the loop thread and resumes the caller with its result, without blocking a
    /// thread. When the loop has stopped (the work is dropped unrun) the caller gets `loopStopped`.
    func iceWork<T: Sendable>(_ work: @escaping @Sendable () throws(ICEError) -> T) async throws(ICEError) -> T {
        let result: Result<T, ICEError> = await withCheckedContinuation { continuation in
            let once = ResumeOnce(continuation)
            invoke {
                do throws(ICEError) { once.resume(.success(try work())) } catch { once.resume(.failure(error)) }
            }
            // invoke dropped the work: the closure (and `once`) is gone and resumed `loopStopped`.
        }
        return try result.get()
    }
}

/// Resumes a continuation exactly once; if it is released unresumed (GLibLoop dropped the work
/// after `stop()`), it resumes with `loopStopped` so no caller waits forever.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<T, ICEError>, Never>?>
    init(_ continuation: CheckedContinuation<Result<T, ICEError>, Never>) { self.continuation = Mutex(continuation) }
    func resume(_ result: Result<T, ICEError>) {
        continuation.withLock { $0.take() }?.resume(returning: result)
    }
    deinit { continuation.withLock { $0.take() }?.resume(returning: .failure(.loopStopped)) }
}
