import Dispatch

/// A one-shot Dispatch timer on a queue of its own. A `DispatchSource` may be resumed and cancelled
/// from any thread (Dispatch's contract), which is all this wrapper exposes.
package final class DeadlineTimer: @unchecked Sendable {
    /// A serial queue of its own, so a deadline never waits behind work blocking the global queue
    /// (on Linux that queue is also the pool Swift tasks run on).
    private static let queue = DispatchQueue(label: "sharectl.deadlines")
    private let source: any DispatchSourceTimer
    package init(after interval: DispatchTimeInterval, _ handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: Self.queue)
        source.schedule(deadline: .now() + interval)
        source.setEventHandler(handler: handler)
    }
    package func arm() { source.resume() }
    package func cancel() { source.cancel() }
}
