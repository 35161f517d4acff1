internal import CPipeWire
internal import CSharePipeWire
import Foundation
import ShareCore
import Synchronization

/// A PipeWire video stream consumed on PipeWire's own thread loop: a portal's screen (through the
/// remote fd from OpenPipeWireRemote) or any video node on the default PipeWire socket.
///
/// Offers BGRx, BGRA, RGBx and RGBA, DMA-BUF (LINEAR, where a render node exists) before SHM;
/// keeps only the newest buffer of each wake-up and returns every buffer at once after copying;
/// honours stride, crop, the corrupted flag and damage regions, and draws the cursor from cursor
/// metadata when asked. `deliver` runs on the PipeWire thread and must be cheap.
public final class PipeWireCapture: Sendable {
    public struct Configuration: Sendable {
        /// The node to connect to (nil: let the session manager pick).
        public var nodeID: UInt32?
        /// A PipeWire remote fd (the portal's); the capture takes ownership. nil: the default socket.
        public var remoteFD: Int32?
        /// Draw the cursor from cursor metadata into the frames.
        public var drawCursor = true
        /// Offer DMA-BUF (nil: where a render node exists).
        public var offerDMABUF: Bool?
        public var name = "sharectl-capture"
        /// The sizes, frame rates, buffers and cursor room the stream asks for.
        public var parameters = StreamParameters()

        public init(nodeID: UInt32?, remoteFD: Int32?) {
            self.nodeID = nodeID
            self.remoteFD = remoteFD
        }
    }

    public enum Event: Sendable, Hashable {
        case negotiated(String)
        case streaming
        case failed(String)
        case note(String)
    }

    /// Counters written on the PipeWire thread, read by anyone.
    public final class Counters: Sendable {
        public let frames = Atomic<Int>(0)
        public let corrupted = Atomic<Int>(0)
        public let cursorOnly = Atomic<Int>(0)
        public let damagedPixels = Atomic<Int>(0)
        public let importFailures = Atomic<Int>(0)
        init() {}
    }

    public enum CaptureError: Error, CustomStringConvertible, Sendable {
        case setup(String)
        public var description: String {
            switch self {
            case .setup(let why): "pipewire: \(why)"
            }
        }
    }

    public let counters: Counters
    /// The owner's way to the stream core (its `close()`); PipeWire's thread reaches the core
    /// through its callbacks' user data, under the thread loop's lock.
    private let core: Locked<StreamCore>
    private let stopped = Atomic<Bool>(false)

    /// Connects and starts; frames arrive through `deliver`, state through `events` (both on the
    /// PipeWire thread).
    public init(
        configuration: Configuration, logger: Logger, deliver: @escaping @Sendable (VideoFrame) -> Void,
        events: @escaping @Sendable (Event) -> Void
    ) throws(CaptureError) {
        let dmabuf = configuration.offerDMABUF ?? Self.renderNodeExists()
        let counters = Counters()
        let state = StreamCore(
            configuration: configuration, negotiation: FormatNegotiation(dmabufImportable: dmabuf),
            counters: counters, logger: logger, deliver: deliver, events: events)
        do {
            try state.open()
        } catch {
            state.close()
            throw error
        }
        self.counters = counters
        core = Locked(state)
    }

    /// Disconnects and destroys the stream and joins PipeWire's thread. Safe to call twice.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.withLock { $0.close() }
    }

    deinit { stop() }

    static func renderNodeExists() -> Bool {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
        return entries.contains { $0.hasPrefix("renderD") }
    }
}

/// The stream's C handles and PipeWire-thread state. Created and torn down by its owner under the
/// thread loop's lock; the callbacks touch it only on PipeWire's thread.
private final class StreamCore {
    let configuration: PipeWireCapture.Configuration
    var negotiation: FormatNegotiation
    let counters: PipeWireCapture.Counters
    let logger: Logger
    let deliver: @Sendable (VideoFrame) -> Void
    let events: @Sendable (PipeWireCapture.Event) -> Void

    let pipewire = PipeWireThreadLoop()
    var stream: OpaquePointer?
    let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    let streamEvents = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
    var closed = false

    // PipeWire-thread state
    var assembler = FrameAssembler(format: .bgrx)
    var negotiatedFormat: CSharePipeWire_video_format?
    var cursor: FrameAssembler.Cursor?
    var cursorPosition: (x: Int, y: Int)?
    var sequence: UInt64 = 0
    var wasStreaming = false

    init(
        configuration: PipeWireCapture.Configuration, negotiation: FormatNegotiation,
        counters: PipeWireCapture.Counters,
        logger: Logger, deliver: @escaping @Sendable (VideoFrame) -> Void,
        events: @escaping @Sendable (PipeWireCapture.Event) -> Void
    ) {
        self.configuration = configuration
        self.negotiation = negotiation
        self.counters = counters
        self.logger = logger
        self.deliver = deliver
        self.events = events
        hook.initialize(to: spa_hook())
        streamEvents.initialize(to: pw_stream_events())
    }

    deinit {
        hook.deallocate()
        streamEvents.deallocate()
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> StreamCore {
        Unmanaged<StreamCore>.fromOpaque(data!).takeUnretainedValue()
    }

    func open() throws(PipeWireCapture.CaptureError) {
        do {
            try pipewire.open(name: configuration.name)
        } catch {
            if let fd = configuration.remoteFD { closeDescriptor(fd) }
            throw .setup(error.description)
        }
        pipewire.lock()
        defer { pipewire.unlock() }
        guard let pwCore = pipewire.connect(fd: configuration.remoteFD) else {  // takes the fd, also on failure
            throw .setup(
                "cannot connect to PipeWire (\(String(cString: strerror(errno))))"
                    + (configuration.remoteFD == nil ? "; is the PipeWire daemon running for this user?" : ""))
        }
        let properties = pw_properties_new_string("media.type=Video media.category=Capture media.role=Screen")
        guard let stream = pw_stream_new(pwCore, configuration.name, properties) else {
            throw .setup("cannot create a stream")
        }
        self.stream = stream
        streamEvents.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        streamEvents.pointee.state_changed = { data, _, state, error in
            StreamCore.from(data).stateChanged(state, error: error.map { String(cString: $0) })
        }
        streamEvents.pointee.param_changed = { data, id, param in
            StreamCore.from(data).paramChanged(id: id, param: param)
        }
        streamEvents.pointee.process = { data in
            StreamCore.from(data).process()
        }
        pw_stream_add_listener(stream, hook, streamEvents, Unmanaged.passUnretained(self).toOpaque())
        let result = withFormatParams { params, count in
            pw_stream_connect(
                stream, SPA_DIRECTION_INPUT, configuration.nodeID ?? UInt32(0xffff_ffff),
                pw_stream_flags(rawValue: PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue),
                params, UInt32(count))
        }
        guard result >= 0 else {
            throw .setup(
                "cannot connect the stream to node \(configuration.nodeID.map(String.init) ?? "any") "
                    + "(\(String(cString: strerror(-result))))")
        }
        let offer = negotiation.offer
        logger.info(
            "pipewire: stream connecting to node \(configuration.nodeID.map(String.init) ?? "any"), offering "
                + (offer.dmabufModifiers.isEmpty
                    ? "" : "DMA-BUF (\(offer.dmabufModifiers.map(Self.modifierName).joined(separator: ", "))) then ")
                + "SHM \(offer.formats.map(\.rawValue).joined(separator: ", "))")
    }

    static func modifierName(_ modifier: UInt64) -> String {
        CaptureLibraries.drmModifierName(modifier) ?? String(format: "0x%llx", modifier)
    }

    /// Builds the EnumFormat params of the current offer and hands them to `body`.
    private func withFormatParams(_ body: (UnsafeMutablePointer<UnsafePointer<spa_pod>?>, Int) -> Int32) -> Int32 {
        let offer = negotiation.offer
        var buffer = [UInt8](repeating: 0, count: 8192)
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 8)
        let formats = offer.formats.map { Self.spaFormat($0) }
        var parameters = configuration.parameters.shim
        let count = buffer.withUnsafeMutableBufferPointer { b in
            params.withUnsafeMutableBufferPointer { p in
                formats.withUnsafeBufferPointer { f in
                    offer.dmabufModifiers.withUnsafeBufferPointer { m in
                        CSharePipeWire_build_capture_formats(
                            b.baseAddress, UInt32(b.count), p.baseAddress, UInt32(p.count),
                            f.baseAddress, UInt32(f.count), m.baseAddress, UInt32(m.count),
                            &parameters)
                    }
                }
            }
        }
        guard count > 0 else { return -EINVAL }
        return buffer.withUnsafeMutableBufferPointer { _ in
            params.withUnsafeMutableBufferPointer { body($0.baseAddress!, Int(count)) }
        }
    }

    static func spaFormat(_ format: FormatNegotiation.Format) -> UInt32 {
        switch format {
        case .bgrx: SPA_VIDEO_FORMAT_BGRx.rawValue
        case .bgra: SPA_VIDEO_FORMAT_BGRA.rawValue
        case .rgbx: SPA_VIDEO_FORMAT_RGBx.rawValue
        case .rgba: SPA_VIDEO_FORMAT_RGBA.rawValue
        }
    }

    static func pixelFormat(spa: UInt32) -> PixelFormat? {
        switch spa {
        case SPA_VIDEO_FORMAT_BGRx.rawValue: .bgrx
        case SPA_VIDEO_FORMAT_BGRA.rawValue: .bgra
        case SPA_VIDEO_FORMAT_RGBx.rawValue: .rgbx
        case SPA_VIDEO_FORMAT_RGBA.rawValue: .rgba
        default: nil
        }
    }

    // MARK: PipeWire thread

    func stateChanged(_ state: pw_stream_state, error: String?) {
        let name = String(cString: pw_stream_state_as_string(state))
        logger.info("pipewire: stream \(name)\(error.map { " (\($0))" } ?? "")")
        switch state {
        case PW_STREAM_STATE_ERROR:
            events(.failed("the PipeWire stream failed: \(error ?? "unknown error")"))
        case PW_STREAM_STATE_UNCONNECTED:
            if !closed { events(.failed("the PipeWire stream was disconnected\(error.map { " (\($0))" } ?? "")")) }
        case PW_STREAM_STATE_STREAMING:
            wasStreaming = true
            events(.streaming)
        default:
            break
        }
    }

    func paramChanged(id: UInt32, param: UnsafePointer<spa_pod>?) {
        guard let param, id == SPA_PARAM_Format.rawValue, let stream else { return }
        var parsed = CSharePipeWire_video_format()
        guard CSharePipeWire_parse_video_format(param, &parsed) == 0, let format = Self.pixelFormat(spa: parsed.format)
        else {
            events(.failed("the stream negotiated a format we cannot read"))
            return
        }
        negotiatedFormat = parsed
        assembler.reset(format: format)
        let dmabuf = FormatNegotiation.acceptsDMABUF(formatHasModifier: parsed.has_modifier != 0)
        let types =
            dmabuf ? (1 << SPA_DATA_DmaBuf.rawValue) : (1 << SPA_DATA_MemFd.rawValue) | (1 << SPA_DATA_MemPtr.rawValue)
        let description =
            "\(format.rawValue) \(parsed.width)×\(parsed.height)"
            + (parsed.fps_den > 0 ? " at \(parsed.fps_num)/\(parsed.fps_den)" : "")
            + (dmabuf ? ", DMA-BUF \(Self.modifierName(parsed.modifier))" : ", SHM")
        events(.negotiated(description))
        var buffer = [UInt8](repeating: 0, count: 4096)
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 8)
        var parameters = configuration.parameters.shim
        buffer.withUnsafeMutableBufferPointer { b in
            params.withUnsafeMutableBufferPointer { p in
                let count = CSharePipeWire_build_capture_buffers(
                    b.baseAddress, UInt32(b.count), p.baseAddress, UInt32(p.count),
                    UInt32(types), &parameters)
                if count > 0 { _ = pw_stream_update_params(stream, p.baseAddress, UInt32(count)) }
            }
        }
    }

    func process() {
        guard let stream else { return }
        // Keep only the newest buffer: return older ones at once.
        var newest: UnsafeMutablePointer<pw_buffer>?
        while let buffer = pw_stream_dequeue_buffer(stream) {
            if let older = newest { pw_stream_queue_buffer(stream, older) }
            newest = buffer
        }
        guard let newest else { return }
        defer { pw_stream_queue_buffer(stream, newest) }
        guard let spaBuffer = newest.pointee.buffer, let format = negotiatedFormat else { return }
        var info = CSharePipeWire_buffer_info()
        CSharePipeWire_read_buffer(spaBuffer, &info)
        if info.corrupted != 0 {
            counters.corrupted.add(1, ordering: .relaxed)
            return
        }
        if info.cursor_valid != 0, configuration.drawCursor { updateCursor(info) }
        if info.size == 0 {
            counters.cursorOnly.add(1, ordering: .relaxed)
            return
        }
        let mapping = map(info, format: format)
        guard let (base, length, unmap) = mapping else { return }
        defer { unmap() }
        let region = UnsafeRawBufferPointer(
            start: base.advanced(by: Int(info.offset)), count: max(0, length - Int(info.offset)))
        let crop =
            info.has_crop != 0
            ? FrameAssembler.Rect(
                x: Int(info.crop.x), y: Int(info.crop.y),
                width: Int(info.crop.width), height: Int(info.crop.height)) : nil
        var damage: [FrameAssembler.Rect]?
        if info.damage_present != 0, info.damage_count > 0, info.damage_count <= UInt32(CSHAREPIPEWIRE_MAX_DAMAGE) {
            damage = withUnsafeBytes(of: info.damage) { raw in
                raw.bindMemory(to: CSharePipeWire_rect.self).prefix(Int(info.damage_count)).map {
                    FrameAssembler.Rect(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height))
                }
            }
        }
        do {
            let copied = try assembler.take(
                region, stride: Int(info.stride), bufferWidth: Int(format.width),
                bufferHeight: Int(format.height), crop: crop, damage: damage)
            counters.damagedPixels.add(copied, ordering: .relaxed)
        } catch {
            logger.warning("\(error)")
            return
        }
        sequence += 1
        let drawn = configuration.drawCursor ? placedCursor() : nil
        if let frame = assembler.frame(cursor: drawn, captureMicros: Clocks.monotonicMicros(), sequence: sequence) {
            counters.frames.add(1, ordering: .relaxed)
            deliver(frame)
        }
    }

    /// The buffer's bytes: mapped by PipeWire (SHM, mappable DMA-BUF) or mapped here (a LINEAR
    /// DMA-BUF, read between DMA_BUF_IOCTL_SYNC start and end).
    /// A DMA-BUF that cannot be mapped drops its modifier and renegotiates.
    private func map(_ info: CSharePipeWire_buffer_info, format: CSharePipeWire_video_format)
        -> (UnsafeRawPointer, Int, () -> Void)?
    {
        if let data = info.data {
            return (UnsafeRawPointer(data), Int(info.maxsize), {})
        }
        guard info.data_type == SPA_DATA_DmaBuf.rawValue, info.fd >= 0 else { return nil }
        let length = Int(info.maxsize) + Int(info.mapoffset)
        let mapped = mmap(nil, length, PROT_READ, MAP_SHARED, Int32(info.fd), 0)
        guard let mapped, mapped != MAP_FAILED else {
            importFailed(modifier: format.modifier, why: String(cString: strerror(errno)))
            return nil
        }
        let fd = Int32(info.fd)
        _ = CSharePipeWire_dmabuf_sync(fd, 1)
        return (
            UnsafeRawPointer(mapped.advanced(by: Int(info.mapoffset))), Int(info.maxsize),
            {
                _ = CSharePipeWire_dmabuf_sync(fd, 0)
                munmap(mapped, length)
            }
        )
    }

    private func importFailed(modifier: UInt64, why: String) {
        counters.importFailures.add(1, ordering: .relaxed)
        guard negotiation.importFailed(modifier: modifier), let stream else { return }
        events(
            .note(
                "a DMA-BUF with modifier \(Self.modifierName(modifier)) could not be imported (\(why)); "
                    + "renegotiating without it"))
        _ = withFormatParams { params, count in pw_stream_update_params(stream, params, UInt32(count)) }
    }

    private func updateCursor(_ info: CSharePipeWire_buffer_info) {
        cursorPosition = (Int(info.cursor_x) - Int(info.hotspot_x), Int(info.cursor_y) - Int(info.hotspot_y))
        guard info.cursor_has_bitmap != 0, let bitmap = info.bitmap else { return }
        let rgba: Bool
        switch info.bitmap_format {
        case SPA_VIDEO_FORMAT_RGBA.rawValue: rgba = true
        case SPA_VIDEO_FORMAT_BGRA.rawValue: rgba = false
        default: return  // a bitmap layout we do not draw
        }
        let width = Int(info.bitmap_width), height = Int(info.bitmap_height), stride = Int(info.bitmap_stride)
        let most = configuration.parameters.maxCursorSide
        guard width <= most, height <= most, stride >= width * 4 else { return }
        let bytes = [UInt8](UnsafeBufferPointer(start: bitmap, count: stride * height))
        cursor = FrameAssembler.Cursor(
            x: 0, y: 0, width: width, height: height, stride: stride, pixels: bytes, rgbaOrder: rgba)
    }

    private func placedCursor() -> FrameAssembler.Cursor? {
        guard var cursor, let position = cursorPosition else { return nil }
        cursor.x = position.x
        cursor.y = position.y
        return cursor
    }

    // MARK: Owner

    /// Destroys the stream, then the core, the context and the loop (joining its thread) in
    /// PipeWireThreadLoop's order.
    func close() {
        guard !closed else { return }
        pipewire.close {
            closed = true  // before the stream goes: its "unconnected" is then no failure
            if let stream {
                spa_hook_remove(hook)
                pw_stream_disconnect(stream)
                pw_stream_destroy(stream)
                self.stream = nil
            }
        }
        closed = true
    }
}

private func closeDescriptor(_ fd: Int32) { _ = close(fd) }

extension PipeWireCapture {
    /// Whether a PipeWire daemon answers on the default socket: nil when it does, else why not.
    public static func probeDaemon() -> String? {
        let pipewire = PipeWireThreadLoop()
        defer { pipewire.close() }
        do {
            try pipewire.open(name: "sharectl-probe", start: false)
        } catch {
            return error.description
        }
        guard pipewire.connect() != nil else {
            return "no PipeWire daemon on the default socket (\(String(cString: strerror(errno))))"
        }
        return nil
    }
}
