internal import CPipeWire
internal import CSharePipeWire
import Foundation
import ScreenCapture
import ShareCore
import Synchronization

/// The process's one echo canceller: PipeWire's `libpipewire-module-echo-cancel` loaded into a
/// PipeWire context of our own (its thread loop, its connection), so its four nodes live exactly
/// as long as this process wants them and the WebRTC engine runs in this process
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
                let host = try ModuleHost(arguments: arguments, nodes: nodes)
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

    /// Where a microphone's capture connects: the module's cleaned source while it runs, else
    /// the node asked for (`node` nil: the default source).
    func captureTarget(for node: String?, logger: Logger) -> String? {
        runs(logger: logger) ? nodes.source : node
    }

    /// Where the call's playout goes: the module's sink (the echo reference) when echo
    /// cancellation runs, else `target`.
    func playoutTarget(for target: String?, logger: Logger) -> String? {
        let cancels = state.withLock { $0.wanted && $0.settings.echoCancellation }
        return cancels && runs(logger: logger) ? nodes.sink : target
    }

    /// Loaded, and its nodes still there (the module unloads itself when one of its streams is
    /// refused, e.g. a microphone named but not found).
    private func runs(logger: Logger) -> Bool {
        prepare(logger: logger) == .loaded && !(state.withLock { $0.host }?.stopped ?? true)
    }

    /// "echo cancellation on (webrtc), noise suppression on"; empty when no microphone is used.
    public var status: String {
        let (wanted, settings, outcome, host) = state.withLock { ($0.wanted, $0.settings, $0.outcome, $0.host) }
        guard wanted else { return "" }
        return settings.statusText(outcome == .loaded && host?.stopped == true ? .stopped : outcome)
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
/// once. `init` returns when WirePlumber has linked one of the module's streams (its capture or
/// playback), or after 3 s: a stream that names the module's sink or source before WirePlumber
/// knows them is refused as "not found". The module unloads itself when one of its streams is
/// refused or the connection ends (`stopped`), so it is never destroyed by hand: the context's
/// destruction unloads it if it is still there.
private final class ModuleHost: @unchecked Sendable {
    // @unchecked: the loop, the module handle and the registry are used by `init` and `close`,
    // which `EchoCanceller` calls under its lock, and by the registry's callbacks on PipeWire's
    // thread, which hold the loop's lock; `init` reads what they found under that lock.
    private let pipewire = PipeWireThreadLoop()
    private var registry: OpaquePointer?
    private let registryHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let registryEvents = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
    private let names: Set<String>
    private let streams: Set<String>
    /// PipeWire-thread state: the module's nodes as the registry announces them.
    private var nodeIDs: [UInt32: String] = [:]
    private var linked = false
    private let gone = Atomic<Bool>(false)

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(arguments: String, nodes: EchoCancelSettings.Nodes) throws(Failure) {
        names = [nodes.capture, nodes.source, nodes.sink, nodes.playback]
        streams = [nodes.capture, nodes.playback]
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
            registryEvents.pointee.global_remove = { data, id in
                guard let data else { return }
                Unmanaged<ModuleHost>.fromOpaque(data).takeUnretainedValue().removed(id: id)
            }
            _ = CSharePipeWire_registry_add_listener(
                registry, registryHook, registryEvents, Unmanaged.passUnretained(self).toOpaque())
        }
        let module = pipewire.loadModule(name: EchoCancelSettings.moduleName, arguments: arguments)
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

    /// One of the module's nodes went: the module unloaded itself.
    var stopped: Bool { gone.load(ordering: .acquiring) }

    /// On PipeWire's thread.
    private func removed(id: UInt32) {
        if nodeIDs.removeValue(forKey: id) != nil { gone.store(true, ordering: .releasing) }
    }

    /// On PipeWire's thread: the module's nodes, then a link to or from one of its streams.
    private func global(id: UInt32, type: String, props: UnsafePointer<spa_dict>) {
        func value(_ key: String) -> String? { spa_dict_lookup(props, key).map { String(cString: $0) } }
        switch type {
        case "PipeWire:Interface:Node":
            if let name = value("node.name"), names.contains(name) { nodeIDs[id] = name }
        case "PipeWire:Interface:Link":
            let ends = [value("link.output.node"), value("link.input.node")].compactMap { $0.flatMap(UInt32.init) }
            if ends.contains(where: { nodeIDs[$0].map(streams.contains) ?? false }) { linked = true }
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
        }
    }

    deinit {
        close()
        registryHook.deallocate()
        registryEvents.deallocate()
    }
}
