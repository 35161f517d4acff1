internal import CPipeWire
internal import CSharePipeWire
import Foundation
import ScreenCapture
import ShareCore
import Synchronization
import WebRTCTransport

/// One PipeWire audio stream on PipeWire's own thread loop (`pw_thread_loop`): playback (call
/// playout into the default sink, or a named one) or capture (a microphone: the default source, or
/// a named node). 48 kHz, interleaved signed 16-bit samples, 1 or 2 channels, asking for a 20 ms
/// quantum (`node.latency` 960/48000).
///
/// `process` runs on the PipeWire thread and must be cheap: for playback it fills the samples it is
/// given (the whole buffer), for capture it reads them. A registry listener follows the links of
/// the stream's node, so `peerNode` names the sink (or source) it is connected to.
final class PipeWireAudioStream: Sendable {
    enum Direction: Sendable { case playback, capture }

    struct Failure: Error, CustomStringConvertible, Sendable {
        let description: String
    }

    /// What the PipeWire thread reports, read by anyone.
    struct Status: Sendable, Equatable {
        var streaming = false
        /// The node at the other end of this stream's links (`node.name`).
        var peerNode: String?
        /// When `peerNode` is a filter's node (the echo canceller's source or sink): the node at
        /// the far side of the filter's own stream, the real microphone or output.
        var filteredNode: String?
        var error: String?
    }

    let direction: Direction
    let channels: Int
    /// The owner's way to the stream core (`close()`); PipeWire's thread reaches the core through
    /// its callbacks' user data, under the thread loop's lock.
    private let core: Locked<AudioStreamCore>
    /// Shared with the core, which writes it on PipeWire's thread; read without waiting on `core`.
    private let statusCell: StatusCell
    private let stopped = Atomic<Bool>(false)

    /// `filter`: when the stream links to `filter.node`, `Status.filteredNode` names what the
    /// filter's own `filter.stream` is linked to (what feeds it for capture, where it plays for
    /// playback).
    init(
        direction: Direction, channels: Int, target: String?, name: String, logger: Logger,
        filter: (node: String, stream: String)? = nil,
        process: @escaping @Sendable (UnsafeMutableBufferPointer<Int16>) -> Void
    ) throws(Failure) {
        guard channels == 1 || channels == 2 else {
            throw Failure(description: "pipewire: \(channels) channels (1 or 2 only)")
        }
        self.direction = direction
        self.channels = channels
        let statusCell = StatusCell()
        let state = AudioStreamCore(
            direction: direction, channels: channels, target: target, name: name,
            logger: logger, filter: filter, status: statusCell, process: process)
        do {
            try state.open()
        } catch {
            state.close()
            throw error
        }
        self.statusCell = statusCell
        core = Locked(state)
    }

    var status: Status { statusCell.value.withLock { $0 } }

    /// Disconnects and destroys the stream and joins PipeWire's thread. Safe to call twice.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.withLock { $0.close() }
    }

    deinit { stop() }
}

/// The stream's status, written on PipeWire's thread and read by the owner.
private final class StatusCell: Sendable {
    let value = Locked(PipeWireAudioStream.Status())
}

/// The stream's C handles and PipeWire-thread state. Created and torn down by its owner under the
/// thread loop's lock; the callbacks touch it only on PipeWire's thread.
private final class AudioStreamCore {
    let direction: PipeWireAudioStream.Direction
    let channels: Int
    let target: String?
    let name: String
    let logger: Logger
    let filter: (node: String, stream: String)?
    let process: @Sendable (UnsafeMutableBufferPointer<Int16>) -> Void
    let status: StatusCell

    let pipewire = PipeWireThreadLoop()
    var stream: OpaquePointer?
    var registry: OpaquePointer?
    let streamHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    let registryHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    let streamEvents = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
    let registryEvents = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
    var closed = false
    var wasStreaming = false

    // PipeWire-thread state: node names and links from the registry.
    var nodes: [UInt32: String] = [:]
    var links: [UInt32: (output: UInt32, input: UInt32)] = [:]

    init(
        direction: PipeWireAudioStream.Direction, channels: Int, target: String?, name: String, logger: Logger,
        filter: (node: String, stream: String)?, status: StatusCell,
        process: @escaping @Sendable (UnsafeMutableBufferPointer<Int16>) -> Void
    ) {
        self.status = status
        self.direction = direction
        self.channels = channels
        self.target = target
        self.name = name
        self.logger = logger
        self.filter = filter
        self.process = process
        streamHook.initialize(to: spa_hook())
        registryHook.initialize(to: spa_hook())
        streamEvents.initialize(to: pw_stream_events())
        registryEvents.initialize(to: pw_registry_events())
    }

    deinit {
        streamHook.deallocate()
        registryHook.deallocate()
        streamEvents.deallocate()
        registryEvents.deallocate()
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> AudioStreamCore {
        Unmanaged<AudioStreamCore>.fromOpaque(data!).takeUnretainedValue()
    }

    func open() throws(PipeWireAudioStream.Failure) {
        do {
            try pipewire.open(name: name)
        } catch {
            throw .init(description: "pipewire: \(error)")
        }
        pipewire.lock()
        defer { pipewire.unlock() }
        guard let pwCore = pipewire.connect() else {
            throw .init(description: "no PipeWire daemon (\(String(cString: strerror(errno))))")
        }
        let user = Unmanaged.passUnretained(self).toOpaque()

        if let registry = CSharePipeWire_core_get_registry(pwCore) {
            self.registry = registry
            registryEvents.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
            registryEvents.pointee.global = { data, id, _, type, _, props in
                guard let type else { return }
                AudioStreamCore.from(data).global(id: id, type: String(cString: type), props: props)
            }
            registryEvents.pointee.global_remove = { data, id in
                AudioStreamCore.from(data).globalRemoved(id: id)
            }
            _ = CSharePipeWire_registry_add_listener(registry, registryHook, registryEvents, user)
        }

        let role = direction == .playback ? "Playback" : "Capture"
        guard
            let properties = pw_properties_new_string(
                "media.type=Audio media.category=\(role) media.role=Communication node.latency=960/48000")
        else {
            throw .init(description: "pipewire: cannot make the stream's properties")
        }
        pw_properties_set(properties, "node.name", name)
        if let target {
            // A named node only: WirePlumber must not fall back to the default one when it is missing.
            pw_properties_set(properties, "target.object", target)
            pw_properties_set(properties, "node.dont-reconnect", "true")
        }
        guard let stream = pw_stream_new(pwCore, name, properties) else {
            throw .init(description: "pipewire: cannot create a stream")
        }
        self.stream = stream
        streamEvents.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        streamEvents.pointee.state_changed = { data, _, state, error in
            AudioStreamCore.from(data).stateChanged(state, error: error.map { String(cString: $0) })
        }
        streamEvents.pointee.process = { data in
            AudioStreamCore.from(data).processBuffer()
        }
        pw_stream_add_listener(stream, streamHook, streamEvents, user)
        var buffer = [UInt8](repeating: 0, count: 1024)
        let result = buffer.withUnsafeMutableBufferPointer { b -> Int32 in
            guard
                let format = CSharePipeWire_build_audio_format(b.baseAddress, UInt32(b.count), 48_000, UInt32(channels))
            else {
                return -EINVAL
            }
            var params: [UnsafePointer<spa_pod>?] = [format]
            return params.withUnsafeMutableBufferPointer { p in
                pw_stream_connect(
                    stream, direction == .playback ? SPA_DIRECTION_OUTPUT : SPA_DIRECTION_INPUT,
                    UInt32(0xffff_ffff),
                    pw_stream_flags(
                        rawValue: PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue),
                    p.baseAddress, 1)
            }
        }
        guard result >= 0 else {
            throw .init(
                description:
                    "pipewire: cannot connect the \(role.lowercased()) stream (\(String(cString: strerror(-result))))")
        }
        logger.info(
            "pipewire: \(role.lowercased()) stream connecting to \(target ?? "the default \(direction == .playback ? "sink" : "source")")"
        )
    }

    // MARK: PipeWire thread

    func stateChanged(_ state: pw_stream_state, error: String?) {
        logger.info(
            "pipewire: audio stream \(String(cString: pw_stream_state_as_string(state)))\(error.map { " (\($0))" } ?? "")"
        )
        status.value.withLock { s in
            s.streaming = state == PW_STREAM_STATE_STREAMING
            if state == PW_STREAM_STATE_ERROR { s.error = error ?? "stream error" }
            if state == PW_STREAM_STATE_STREAMING { wasStreaming = true }
            if state == PW_STREAM_STATE_UNCONNECTED, !closed, s.error == nil {
                // WirePlumber destroys a stream whose named node (target.object) does not exist.
                s.error = target != nil && !wasStreaming ? "not found" : "disconnected\(error.map { " (\($0))" } ?? "")"
            }
        }
        updatePeer()
    }

    func global(id: UInt32, type: String, props: UnsafePointer<spa_dict>?) {
        guard let props else { return }
        func value(_ key: String) -> String? { spa_dict_lookup(props, key).map { String(cString: $0) } }
        switch type {
        case "PipeWire:Interface:Node":
            if let name = value("node.name") { nodes[id] = name }
        case "PipeWire:Interface:Link":
            if let output = value("link.output.node").flatMap(UInt32.init),
                let input = value("link.input.node").flatMap(UInt32.init)
            {
                links[id] = (output, input)
            }
        default:
            return
        }
        updatePeer()
    }

    func globalRemoved(id: UInt32) {
        nodes[id] = nil
        links[id] = nil
        updatePeer()
    }

    private func updatePeer() {
        guard let stream else { return }
        let me = pw_stream_get_node_id(stream)
        let peers = links.values.compactMap { link -> UInt32? in
            direction == .playback ? (link.output == me ? link.input : nil) : (link.input == me ? link.output : nil)
        }
        let peer = peers.compactMap { nodes[$0] }.sorted().first
        var filtered: String?
        if let filter, peer == filter.node, let inner = nodes.first(where: { $0.value == filter.stream })?.key {
            filtered =
                links.values.compactMap { link in
                    direction == .capture
                        ? (link.input == inner ? nodes[link.output] : nil)
                        : (link.output == inner ? nodes[link.input] : nil)
                }
                .sorted().first
        }
        status.value.withLock { s in
            s.peerNode = peer
            s.filteredNode = filtered
        }
    }

    func processBuffer() {
        guard let stream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
            let base = datas.pointee.data, let chunk = datas.pointee.chunk
        else { return }
        let frameBytes = 2 * channels
        switch direction {
        case .playback:
            var frames = Int(datas.pointee.maxsize) / frameBytes
            if buffer.pointee.requested > 0 { frames = min(frames, Int(buffer.pointee.requested)) }
            let samples = base.bindMemory(to: Int16.self, capacity: frames * channels)
            process(UnsafeMutableBufferPointer(start: samples, count: frames * channels))
            chunk.pointee.offset = 0
            chunk.pointee.stride = Int32(frameBytes)
            chunk.pointee.size = UInt32(frames * frameBytes)
        case .capture:
            let offset = Int(min(chunk.pointee.offset, datas.pointee.maxsize))
            let size = Int(min(chunk.pointee.size, datas.pointee.maxsize - UInt32(offset)))
            let count = size / 2
            guard count > 0 else { return }
            let samples = (base + offset).bindMemory(to: Int16.self, capacity: count)
            process(UnsafeMutableBufferPointer(start: samples, count: count))
        }
    }

    // MARK: Owner

    /// Destroys the stream and the registry, then the core, the context and the loop (joining its
    /// thread) in PipeWireThreadLoop's order.
    func close() {
        guard !closed else { return }
        pipewire.close {
            closed = true  // before the stream goes: its "unconnected" is then no error
            if let stream {
                spa_hook_remove(streamHook)
                pw_stream_disconnect(stream)
                pw_stream_destroy(stream)
                self.stream = nil
            }
            if let registry {
                spa_hook_remove(registryHook)
                pw_proxy_destroy(registry)
                self.registry = nil
            }
        }
        closed = true
    }
}
