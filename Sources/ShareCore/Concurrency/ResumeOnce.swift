/// A continuation that is resumed at most once, whoever gets there first: the work that finishes,
/// a deadline, a cancellation or a loop that stops. Later resumes do nothing (and say so by
/// returning false). Released without having been resumed, it fails the continuation with
/// `abandoned`, so a caller whose work was dropped unrun hears of it instead of waiting forever.
public final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<T, any Error>?>
    private let abandoned: any Error

    public init(_ continuation: CheckedContinuation<T, any Error>, ifAbandoned abandoned: any Error) {
        self.continuation = Locked(continuation)
        self.abandoned = abandoned
    }

    /// Resumes the continuation with `result` unless it was resumed before. Returns whether this
    /// call resumed it.
    @discardableResult
    public func resume(with result: Result<T, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }

    @discardableResult
    public func resume(returning value: T) -> Bool { resume(with: .success(value)) }

    @discardableResult
    public func resume(throwing error: any Error) -> Bool { resume(with: .failure(error)) }

    deinit { continuation.withLock { $0.take() }?.resume(throwing: abandoned) }
}
