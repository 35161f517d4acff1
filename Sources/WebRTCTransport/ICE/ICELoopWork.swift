import GLibLoop

/// A value confined to the GLib loop thread, carried through `GLibLoop.invoke` closures.
/// `@unchecked` because the compiler cannot see the confinement: `value` is only touched inside
/// work that runs on the loop thread (or after the loop has stopped, when no other thread can).
struct ICELoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
}

extension GLibLoop {
    /// Runs `work` on the loop thread and resumes the caller with its result, without blocking a
    /// thread (`perform`). When the loop has stopped the caller gets `loopStopped`.
    func iceWork<T: Sendable>(_ work: @escaping @Sendable () throws(ICEError) -> T) async throws(ICEError) -> T {
        do {
            return try await perform { () throws -> T in try work() }
        } catch let error as ICEError {
            throw error
        } catch {
            throw .loopStopped
        }
    }
}
