internal import CGIO
internal import CShareSanitizer
import Foundation
import ShareCore

/// The one GLib main-loop thread of a process. libnice, libsoup and GDBus run on it; other threads
/// reach it only through `invoke` (which wraps `g_main_context_invoke`). Its owner starts it with
/// `init` and stops it with `stop()`, which quits the loop and joins the thread; nothing else
/// creates GLib threads of its own.
///
/// The context is exposed as an opaque pointer (`contextPointer`) for the modules that hand it to
/// a C library (`nice_agent_new`, `g_main_context_push_thread_default`); no C type leaks here.
public final class GLibLoop: Sendable {
    private let handles: Handles
    private var context: OpaquePointer { handles.context }
    private var loop: OpaquePointer { handles.loop }
    private let shared = Shared()
    private var finished: DispatchSemaphore { shared.finished }
    public let name: String

    private struct State {
        var threadID: pthread_t?
        var stopped = false
        /// What to run instead of the work still queued when the loop stops (`invoke(_:ifDropped:)`).
        var abandon: [UInt64: @Sendable () -> Void] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// What the loop thread shares with its owner (the thread must not retain the owner itself).
    private final class Shared: Sendable {
        let state = Locked<State>(State())
        let finished = DispatchSemaphore(value: 0)
    }

    /// Starts the loop on a new thread named `name` and returns once the loop is running.
    public init(name: String = "glib-loop") {
        self.name = name
        let context = g_main_context_new()!
        let loop = g_main_loop_new(context, 0)!
        handles = Handles(context: context, loop: loop)
        let started = DispatchSemaphore(value: 0)
        let handles = self.handles
        let shared = self.shared
        let thread = Thread {
            shared.state.withLock { $0.threadID = pthread_self() }
            let context = handles.context
            g_main_context_push_thread_default(context)
            // Signal "running" from an idle source, which only runs once g_main_loop_run has begun:
            // a quit that came before the run would be forgotten. (g_main_context_invoke would run
            // the callback at once here, on the context's own thread, before the loop runs.)
            let box = Unmanaged.passRetained(SemaphoreBox(started))
            let idle = g_idle_source_new()
            g_source_set_callback(
                idle,
                { data in
                    Unmanaged<SemaphoreBox>.fromOpaque(data!).takeRetainedValue().semaphore.signal()
                    return 0
                }, box.toOpaque(), nil)
            g_source_attach(idle, context)
            g_source_unref(idle)
            g_main_loop_run(handles.loop)
            g_main_context_pop_thread_default(context)
            // A thread made later may be given this one's pthread_t: it must not pass for the loop.
            shared.state.withLock { $0.threadID = nil }
            shared.finished.signal()
        }
        thread.name = name
        thread.start()
        started.wait()
    }

    deinit {
        stop()
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// The `GMainContext *` this loop runs, for C libraries that take one.
    public var contextPointer: OpaquePointer { context }

    /// True on the loop's own thread.
    public var isLoopThread: Bool {
        guard let id = shared.state.withLock({ $0.threadID }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Runs `work` on the loop thread: at once when called there, otherwise queued to it.
    /// Work submitted after `stop()` is dropped (the loop no longer runs).
    public func invoke(_ work: @escaping @Sendable () -> Void) {
        if shared.state.withLock({ $0.stopped }) { return }
        let box = Unmanaged.passRetained(WorkBox(work))
        CShareSanitizer_release(box.toOpaque())
        g_main_context_invoke(
            context,
            { data in
                CShareSanitizer_acquire(data)
                Unmanaged<WorkBox>.fromOpaque(data!).takeRetainedValue().work()
                return 0  // G_SOURCE_REMOVE
            }, box.toOpaque())
    }

    /// Runs `work` on the loop thread and waits for its result. Blocks the caller: call it from a
    /// plain thread, never from an actor or the cooperative pool (async code awaits `perform`).
    /// From the loop thread it runs inline. One caller still reaches it from a task: a portal
    /// capture's `stop()` (closing the portal session) when a share stops its sending side.
    public func invokeAndWait<T: Sendable>(_ work: @escaping @Sendable () throws -> T) throws -> T {
        if isLoopThread { return try work() }
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        invoke {
            let outcome = Result { try work() }
            result.withLock { $0 = outcome }
            done.signal()
        }
        // The loop may stop before it runs the work: look again every 100 ms rather than hang.
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if shared.state.withLock({ $0.stopped }) { throw GLibLoopError.stopped(name) }
        }
        return try result.withLock { $0! }.get()
    }

    /// Runs `work` on the loop thread and returns its result without blocking a thread of the
    /// cooperative pool: the caller is suspended until the loop has run it. From the loop thread
    /// it runs inline. Throws `GLibLoopError.stopped` when the loop stops before running it.
    public func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        if isLoopThread { return try work() }
        let name = self.name
        return try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation, ifAbandoned: GLibLoopError.stopped(name))
            invoke(
                { once.resume(with: Result { try work() }) },
                ifDropped: { once.resume(throwing: GLibLoopError.stopped(name)) })
        }
    }

    /// Runs `work` on the loop thread as `invoke` does; when the loop never runs it (it had
    /// stopped, or stops first), `dropped` runs instead, on the thread that submitted it or on the
    /// one that stopped the loop. Exactly one of the two runs.
    public func invoke(_ work: @escaping @Sendable () -> Void, ifDropped dropped: @escaping @Sendable () -> Void) {
        let shared = self.shared
        let id = shared.state.withLock { state -> UInt64? in
            guard !state.stopped else { return nil }
            state.nextWaiter += 1
            state.abandon[state.nextWaiter] = dropped
            return state.nextWaiter
        }
        guard let id else { return dropped() }
        invoke {
            // Whoever removes the entry first decides: here the work, in `stop()` the drop.
            guard shared.state.withLock({ $0.abandon.removeValue(forKey: id) }) != nil else { return }
            work()
        }
    }

    /// True once `stop()` has begun: no work submitted from now on will run.
    public var hasStopped: Bool { shared.state.withLock { $0.stopped } }

    /// Runs `work` on the loop thread every `interval` until it returns false or the timer is
    /// cancelled. The returned timer cancels itself when released.
    public func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Bool) -> GLibTimer {
        let millis = UInt32(
            clamping: interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        let timer = GLibTimer(context: handles)
        let box = Unmanaged.passRetained(TimerBox(work))
        timer.attach(millis: max(1, millis), box: box)
        return timer
    }

    /// Quits the loop and joins its thread. Safe to call more than once, from any thread but the
    /// loop's own (from there the join would wait on itself, so it only quits).
    public func stop() {
        let first = shared.state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        g_main_loop_quit(loop)
        g_main_context_wakeup(context)
        if !isLoopThread { finished.wait() }
        // Work that did not run by now never will: its awaiting callers hear so.
        for abandoned in shared.state.withLock({ s in
            defer { s.abandon = [:] }; return s.abandon.values
        }) { abandoned() }
    }
}

public enum GLibLoopError: Error, CustomStringConvertible, Sendable {
    case stopped(String)
    public var description: String {
        switch self {
        case .stopped(let name): return "glib: the \(name) loop has stopped; no more work can run on it"
        }
    }
}

/// `GMainContext` and `GMainLoop` are thread-safe by GLib's contract (invoke, wakeup and quit may
/// be called from any thread), so their pointers may cross threads.
fileprivate struct Handles: @unchecked Sendable {
    let context: OpaquePointer
    let loop: OpaquePointer
}

/// A repeating GLib timeout source on a `GLibLoop`; `cancel()` (or release) removes it.
public final class GLibTimer: Sendable {
    private let source = Locked<SourcePointer?>(nil)
    private let handles: Handles

    fileprivate init(context: Handles) { handles = context }

    fileprivate func attach(millis: UInt32, box: Unmanaged<TimerBox>) {
        guard let created = g_timeout_source_new(millis) else { return }
        g_source_set_callback(
            created,
            { data in
                CShareSanitizer_acquire(data)
                return Unmanaged<TimerBox>.fromOpaque(data!).takeUnretainedValue().work() ? 1 : 0
            }, box.toOpaque(),
            { data in
                Unmanaged<TimerBox>.fromOpaque(data!).release()
            })
        CShareSanitizer_release(box.toOpaque())
        g_source_attach(created, handles.context)
        source.withLock { $0 = SourcePointer(pointer: created) }
    }

    public func cancel() {
        guard
            let current = source.withLock({ s -> SourcePointer? in
                defer { s = nil }; return s
            })
        else { return }
        g_source_destroy(current.pointer)
        g_source_unref(current.pointer)
    }

    deinit { cancel() }
}

/// GSource pointers may be destroyed from any thread (GLib locks the context).
private struct SourcePointer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GSource>
}

private final class TimerBox {
    let work: @Sendable () -> Bool
    init(_ work: @escaping @Sendable () -> Bool) { self.work = work }
}

private final class WorkBox {
    let work: @Sendable () -> Void
    init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}

private final class SemaphoreBox {
    let semaphore: DispatchSemaphore
    init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
}
