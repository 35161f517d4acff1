import GLibLoop

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
