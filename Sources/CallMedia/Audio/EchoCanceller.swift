internal import CPipeWire
internal import CSharePipeWire
import Foundation
import ScreenCapture
import ShareCore

/// The process's one echo canceller: PipeWire's `libpipewire-module-echo-cancel` loaded into a
/// PipeWire context of our own (its thread loop, its connection), so its four nodes live exactly
/// as long as this process wants them and the WebRTC engine runs on our data thread
/// (`EchoCancelSettings` says what is asked and what is said).
///
/// `configure` comes first (the command's flags, the microphone and the output asked for); the
/// module is loaded at the first `prepare`, which a microphone's capture and the call's playout
/// both call before they connect (blocking: from their own threads, never an actor). When it
/// cannot load, both go on without it and the failure is said once.
public final class EchoCanceller: Sendable {
    public static let shared = EchoCanceller()

    private struct State: Sendable {
        var settings = EchoCancelSettings()
        /// A microphone is used in this process (`--audio mic`): without one nothing is loaded.
        var wanted = false
        var microphone: String?
        var output: String?
        var outcome = EchoCancelSettings.Outcome.notLoaded
        var host: ModuleHost?
    }

    private let state = Locked(State())
    private let loading = Locked(())
    public let nodes = EchoCancelSettings.Nodes(processID: getpid())

    public init() {}

    /// `microphone` and `output` nil: the default source and sink. Takes effect at the first
    /// `prepare`.
    public func configure(settings: EchoCancelSettings, microphone: String?, output: String?) {
        state.withLock { s in
            s.settings = settings
            s.wanted = true
            s.microphone = microphone
            s.output = output
        }
    }

    /// Loads the module once, if wanted. Blocking (connects to PipeWire).
    @discardableResult
    func prepare(logger: Logger) -> EchoCancelSettings.Outcome {
        // `loading` is held while loading, so a capture and a playout starting together load it
        // once; `state` only for moments, so `status` (read by the call's actor) never waits.
        loading.withLock { _ in
            let (wanted, settings, microphone, output, outcome) = state.withLock { s in
                (s.wanted, s.settings, s.microphone, s.output, s.outcome)
            }
            guard wanted, settings.loadsModule, outcome == .notLoaded else { return outcome }
            let arguments = settings.moduleArguments(microphone: microphone, output: output, nodes: nodes)
            do {
                let host = try ModuleHost(arguments: arguments, streams: [nodes.capture, nodes.playback])
                state.withLock { s in
                    s.host = host
                    s.outcome = .loaded
                }
                logger.info("audio: \(settings.statusText(.loaded)) (\(EchoCancelSettings.moduleName))")
                return .loaded
            } catch {
                state.withLock { $0.outcome = .failed("\(error)") }
                logger.warning("\(EchoCancelSettings.failureNotice("\(error)"))")
                return .failed("\(error)")
            }
        }
    }

    /// Where a microphone's capture connects: the module's cleaned source once it is loaded, else
    /// the node asked for (`node` nil: the default source).
    func captureTarget(for node: String?, logger: Logger) -> String? {
        prepare(logger: logger) == .loaded ? nodes.source : node
    }

    /// Where the call's playout goes: the module's sink (the echo reference) when echo
    /// cancellation runs, else `target`.
    func playoutTarget(for target: String?, logger: Logger) -> String? {
        let cancels = state.withLock { $0.wanted && $0.settings.echoCancellation }
        return cancels && prepare(logger: logger) == .loaded ? nodes.sink : target
    }

    /// "echo cancellation on (webrtc), noise suppression on"; empty when no microphone is used.
    public var status: String {
        state.withLock { s in s.wanted ? s.settings.statusText(s.outcome) : "" }
    }

    /// Unloads the module (its nodes go) and closes its connection. Safe to call twice.
    public func stop() {
        let host = state.withLock { s -> ModuleHost? in
            defer { s.host = nil }
            return s.host
        }
        host?.close()
    }
}

/// The thread loop, connection and loaded module behind `EchoCanceller`. Its owner closes it
/// once. `init` returns when WirePlumber has linked one of the module's streams (`streams`), or
/// after 3 s: a stream that names the module's sink or source before WirePlumber knows them is
/// refused as "not found".
private final class ModuleHost: @unchecked Sendable {
    // @unchecked: the loop, the module handle and the registry are used by `init` and `close`,
    // which `EchoCanceller` calls under its lock, and by the registry's callbacks on PipeWire's
    // thread, which hold the loop's lock; `init` reads what they found under that lock.
    private let pipewire = PipeWireThreadLoop()
    private var module: OpaquePointer?
    private var registry: OpaquePointer?
    private let registryHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let registryEvents = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
    private let streams: [String]
    private var streamIDs: Set<UInt32> = []
    private var linked = false

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(arguments: String, streams: [String]) throws(Failure) {
        self.streams = streams
        registryHook.initialize(to: spa_hook())
        registryEvents.initialize(to: pw_registry_events())
        do {
            try pipewire.open(name: "sharectl-echo-cancel")
        } catch {
            throw Failure(description: "\(error)")
        }
        pipewire.lock()
        guard pipewire.connect() != nil else {
            let why = String(cString: strerror(errno))
            pipewire.unlock()
            pipewire.close()
            throw Failure(description: "no PipeWire daemon (\(why))")
        }
        if let core = pipewire.core, let registry = CSharePipeWire_core_get_registry(core) {
            self.registry = registry
            registryEvents.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
            registryEvents.pointee.global = { data, id, _, type, _, props in
                guard let data, let type, let props else { return }
                Unmanaged<ModuleHost>.fromOpaque(data).takeUnretainedValue()
                    .global(id: id, type: String(cString: type), props: props)
            }
            _ = CSharePipeWire_registry_add_listener(
                registry, registryHook, registryEvents, Unmanaged.passUnretained(self).toOpaque())
        }
        module = pipewire.loadModule(name: EchoCancelSettings.moduleName, arguments: arguments)
        let why = String(cString: strerror(errno))
        pipewire.unlock()
        guard module != nil else {
            close()
            throw Failure(description: why)
        }
        for _ in 0..<60 {
            pipewire.lock()
            let done = linked
            pipewire.unlock()
            if done { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// On PipeWire's thread: the module's stream nodes, then a link to or from one of them.
    private func global(id: UInt32, type: String, props: UnsafePointer<spa_dict>) {
        func value(_ key: String) -> String? { spa_dict_lookup(props, key).map { String(cString: $0) } }
        switch type {
        case "PipeWire:Interface:Node":
            if let name = value("node.name"), streams.contains(name) { streamIDs.insert(id) }
        case "PipeWire:Interface:Link":
            let ends = [value("link.output.node"), value("link.input.node")].compactMap { $0.flatMap(UInt32.init) }
            if ends.contains(where: streamIDs.contains) { linked = true }
        default:
            break
        }
    }

    func close() {
        pipewire.close { [self] in
            if let registry {
                spa_hook_remove(registryHook)
                pw_proxy_destroy(registry)
                self.registry = nil
            }
            if let module { CSharePipeWire_module_destroy(module) }
            module = nil
        }
    }

    deinit {
        close()
        registryHook.deallocate()
        registryEvents.deallocate()
    }
}
