import Dispatch
import Synchronization

/// A one-shot Dispatch timer on a queue of its own. A `DispatchSource` may be resumed and cancelled
/// from any thread (Dispatch's contract), which is all this wrapper exposes. One made and never
/// armed is cancelled and resumed as it goes: libdispatch traps on releasing a suspended source.
package final class DeadlineTimer: Sendable {
    /// A serial queue of its own, so a deadline never waits behind work blocking the global queue
    /// (on Linux that queue is also the pool Swift tasks run on).
    private static let queue = DispatchQueue(label: "sharectl.deadlines")
    /// `DispatchSourceTimer` is thread-safe by Dispatch's contract but not marked Sendable.
    private nonisolated(unsafe) let source: any DispatchSourceTimer
    private let armed = Atomic<Bool>(false)

    package init(after interval: DispatchTimeInterval, _ handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: Self.queue)
        source.schedule(deadline: .now() + interval)
        source.setEventHandler(handler: handler)
    }

    /// Starts the countdown (once; arming again does nothing).
    package func arm() {
        guard !armed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        source.resume()
    }

    package func cancel() { source.cancel() }

    deinit {
        if !armed.load(ordering: .acquiring) {
            source.cancel()
            source.resume()
        }
    }
}
