import Foundation

/// Runs blocking work (a socket read, `invokeAndWait`) on a thread of its own, never on the
/// cooperative pool: on Linux the global Dispatch queue is the pool Swift tasks run on (as many
/// threads as cores), and a 200 MB post or a 10 s read there held every other test back.
public func onPlainThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
