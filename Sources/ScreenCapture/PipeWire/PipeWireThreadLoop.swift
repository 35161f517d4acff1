internal import CPipeWire
internal import CSharePipeWire

/// One PipeWire thread loop (`pw_thread_loop`) with its context and core: what a PipeWire stream
/// lives on. The screen capture stream and call audio's streams each own one, and release it
/// through `close(releasing:)`, the one place the teardown order is written:
///
/// 1. under the loop's lock, with its thread still running: the owner's objects (`releasing`:
///    its listeners removed, its stream disconnected and destroyed, any proxy destroyed), then the
///    core disconnected. PipeWire objects are destroyed under the lock of the loop they run on, so
///    no callback of theirs runs on PipeWire's thread meanwhile;
/// 2. the lock released, then the thread stopped and joined (it takes the lock to iterate, so it
///    cannot be joined while the lock is held);
/// 3. the context destroyed, once no thread iterates the loop it was made on;
/// 4. the loop destroyed last.
///
/// Whatever `open` made before it failed is released the same way. Confined to its owner: used
/// from the owning thread, or on PipeWire's thread under the lock.
package final class PipeWireThreadLoop {
    /// The step of `open` that failed.
    package enum OpenFailure: Error, CustomStringConvertible, Sendable {
        case threadLoop, context, start

        package var description: String {
            switch self {
            case .threadLoop: "cannot create a thread loop"
            case .context: "cannot create a context"
            case .start: "cannot start the thread loop"
            }
        }
    }

    private var threadLoop: OpaquePointer?
    private var context: OpaquePointer?
    /// The connection to the daemon (`pw_core`), once `connect` made one.
    package private(set) var core: OpaquePointer?

    package init() { PipeWireLibrary.initialize() }

    deinit { close() }

    /// Makes the loop (its thread is called `name`) and its context, then starts the thread unless
    /// `start` is false (a probe that only connects and disconnects needs no thread).
    package func open(name: String, start: Bool = true) throws(OpenFailure) {
        guard let loop = pw_thread_loop_new(name, nil) else { throw .threadLoop }
        threadLoop = loop
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else { throw .context }
        self.context = context
        guard !start || pw_thread_loop_start(loop) == 0 else { throw .start }
    }

    /// Connects to the daemon: through `fd` (a remote fd such as the portal's, which PipeWire
    /// takes, also on failure) or the default socket. nil with errno set when it cannot; call it
    /// under the lock once the thread runs.
    package func connect(fd: Int32? = nil) -> OpaquePointer? {
        guard let context else { return nil }
        if let fd {
            core = pw_context_connect_fd(context, fd, nil, 0)
        } else {
            core = pw_context_connect(context, nil, 0)
        }
        return core
    }

    /// Loads a PipeWire module (e.g. `libpipewire-module-echo-cancel`) into this loop's context
    /// with `arguments` (SPA-JSON): it runs in this process, on this loop, with its nodes on our
    /// connection. nil with errno set when it cannot load; call it under the lock once connected.
    package func loadModule(name: String, arguments: String) -> OpaquePointer? {
        guard let context else { return nil }
        return CSharePipeWire_load_module(context, name, arguments)
    }

    package func lock() { if let threadLoop { pw_thread_loop_lock(threadLoop) } }
    package func unlock() { if let threadLoop { pw_thread_loop_unlock(threadLoop) } }

    /// Releases everything in the order above; `releasing` runs first under the loop's lock (not
    /// at all when there is no loop, so nothing of the owner's can exist). Safe to call twice.
    package func close(releasing: () -> Void = {}) {
        if let loop = threadLoop {
            pw_thread_loop_lock(loop)
            releasing()
            if let core { pw_core_disconnect(core); self.core = nil }
            pw_thread_loop_unlock(loop)
            pw_thread_loop_stop(loop)
        }
        if let context { pw_context_destroy(context); self.context = nil }
        if let loop = threadLoop { pw_thread_loop_destroy(loop); threadLoop = nil }
    }
}

@available(*, unavailable)
extension PipeWireThreadLoop: Sendable {}

/// pw_init once per process.
enum PipeWireLibrary {
    private static let once: Void = { pw_init(nil, nil) }()
    static func initialize() { _ = once }
}
