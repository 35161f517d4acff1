internal import CGIO
internal import CShareSoup
internal import CSoup
import Foundation
import GLibLoop
import ShareCore
import Synchronization

/// How `RoomServer` listens.
public struct RoomServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// PEM files for HTTPS/WSS; both or neither.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    public var limits: RoomLimits

    public init(host: String, port: Int, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil,
                limits: RoomLimits = RoomLimits()) {
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.limits = limits
    }
}

public enum RoomServerError: Error, CustomStringConvertible, Sendable {
    case badAddress(String)
    case listen(String, reason: String)
    case tls(reason: String)
    case stateFile(String, reason: String)
    case badRoomName(String)
    case clientFilesMissing(String)
    case notStarted

    public var description: String {
        switch self {
        case .badAddress(let text): "room server: '\(text)' is not an address to listen on (want HOST:PORT, e.g. 127.0.0.1:8080)"
        case .listen(let address, let reason): "room server: could not listen on \(address): \(reason)"
        case .tls(let reason): "room server: the TLS certificate or key could not be loaded: \(reason)"
        case .stateFile(let path, let reason): "room server: the state file \(path) could not be used: \(reason)"
        case .badRoomName(let name): "room server: '\(name)' is not a room name (letters, digits, '-' and '_', at most 64)"
        case .clientFilesMissing(let looked): "room server: the browser client's files were not found (looked in \(looked))"
        case .notStarted: "room server: not listening"
        }
    }
}

/// The room server behind `sharectl serve`: HTTP and WebSocket on libsoup 3, all of it on the
/// process's GLib loop thread. Rooms are `Room` values; this class only moves their messages
/// between sockets and them (docs/room-protocol.md).
///
/// Thread safety: the public API may be used from any thread or task; libsoup objects and rooms
/// are touched only on the loop thread (`ServerState`).
public final class RoomServer: Sendable {
    private let loop: GLibLoop
    private let state: ServerBox
    private let logger: Logger

    public init(loop: GLibLoop, client: ClientFiles, logger: Logger = .disabled) {
        self.loop = loop
        self.logger = logger
        state = ServerBox(ServerState(client: client, logger: logger))
    }

    deinit {
        // libsoup's callbacks hold the state unretained: stop them on the loop before it goes.
        // (The closure keeps the state alive until then; a stopped loop drops it with the process.)
        let state = self.state
        loop.invoke { state.value.stop() }
    }

    /// Listens; returns the base URL (`http://HOST:PORT`, the real port when 0 was asked).
    public func start(_ configuration: RoomServerConfiguration) async throws -> String {
        let state = self.state
        return try await onLoop { try state.value.listen(configuration) }
    }

    /// Opens a room (restored from `stateFile` when it holds one, and kept there as it changes);
    /// returns its invite link.
    public func addRoom(named name: String, stateFile: String? = nil) async throws -> String {
        let state = self.state
        return try await onLoop { try state.value.addRoom(named: name, stateFile: stateFile) }
    }

    /// Closes every connection (1001) and stops listening. The loop keeps running for its owner.
    public func stop() async {
        let state = self.state
        _ = try? await onLoop { state.value.stop() }
    }

    private func onLoop<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation)
            loop.invoke { once.resume(with: Result { try work() }) }
            // A loop that has stopped drops the work; `once` is then released unresumed.
        }
    }
}

/// Resumes a continuation exactly once; released unresumed it fails it (the loop dropped the work).
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)
    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation.withLock { $0 = continuation } }
    func resume(with result: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
    deinit { continuation.withLock { $0.take() }?.resume(throwing: RoomServerError.notStarted) }
}

/// The loop-confined state, carried through `@Sendable` closures that run on the loop thread only.
private struct ServerBox: @unchecked Sendable {
    let value: ServerState
    init(_ value: ServerState) { self.value = value }
}

/// One hosted room: the `Room` value and where its snapshot is kept.
final class HostedRoom {
    var room: Room
    let stateFile: String?
    var savedRevision = -1
    init(room: Room, stateFile: String?) {
        self.room = room
        self.stateFile = stateFile
    }
}

/// Everything on the loop thread: the `SoupServer`, the rooms and the open WebSockets.
final class ServerState {
    private var server: UnsafeMutablePointer<SoupServer>?
    private var baseURL = ""
    private var limits = RoomLimits()
    private var rooms: [String: HostedRoom] = [:]
    private var sockets: [ConnectionID: RoomSocket] = [:]
    private var nextConnection = 1
    private var timer: UnsafeMutablePointer<GSource>?
    private let client: ClientFiles
    let logger: Logger

    init(client: ClientFiles, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    static func from(callbackUserData data: UnsafeMutableRawPointer?) -> ServerState {
        Unmanaged<ServerState>.fromOpaque(data!).takeUnretainedValue()
    }

    private var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func listen(_ configuration: RoomServerConfiguration) throws -> String {
        limits = configuration.limits
        guard (0...65535).contains(configuration.port),
              let address = g_inet_socket_address_new_from_string(configuration.host, guint(configuration.port)) else {
            throw RoomServerError.badAddress("\(configuration.host):\(configuration.port)")
        }
        defer { g_object_unref(address) }
        let server = CShareSoup_server_new("sharectl")!
        var options = SoupServerListenOptions(rawValue: 0)
        if let certificatePath = configuration.tlsCertificatePath, let keyPath = configuration.tlsKeyPath {
            var error: UnsafeMutablePointer<GError>?
            guard let certificate = g_tls_certificate_new_from_files(certificatePath, keyPath, &error) else {
                g_object_unref(UnsafeMutableRawPointer(server))
                throw RoomServerError.tls(reason: Self.take(error))
            }
            soup_server_set_tls_certificate(server, certificate)
            g_object_unref(certificate)
            options = SOUP_SERVER_LISTEN_HTTPS
        }
        soup_server_add_handler(server, nil, { _, message, path, query, data in
            ServerState.from(callbackUserData: data).http(message!, path: path.map { String(cString: $0) } ?? "/", query: query)
        }, userData, nil)
        // The plain handler on /ws runs first and refuses a bad room or token (403) before the upgrade.
        soup_server_add_handler(server, "/ws", { _, message, path, query, data in
            ServerState.from(callbackUserData: data).http(message!, path: path.map { String(cString: $0) } ?? "/", query: query)
        }, userData, nil)
        soup_server_add_websocket_handler(server, "/ws", nil, nil, { _, message, path, connection, data in
            ServerState.from(callbackUserData: data).accepted(connection!, path: path.map { String(cString: $0) } ?? "")
        }, userData, nil)
        var error: UnsafeMutablePointer<GError>?
        guard soup_server_listen(server, address, options, &error) != 0 else {
            g_object_unref(UnsafeMutableRawPointer(server))
            throw RoomServerError.listen("\(configuration.host):\(configuration.port)", reason: Self.take(error))
        }
        self.server = server
        var port = configuration.port
        if let uris = soup_server_get_uris(server) {
            if let first = uris.pointee.data { port = Int(g_uri_get_port(OpaquePointer(first))) }
            g_slist_free_full(uris) { g_uri_unref(OpaquePointer($0)) }
        }
        let scheme = options == SOUP_SERVER_LISTEN_HTTPS ? "https" : "http"
        // A wildcard address is no place to send anyone: the link names this machine instead.
        let named = ["0.0.0.0", "::"].contains(configuration.host) ? ProcessInfo.processInfo.hostName : configuration.host
        let host = named.contains(":") ? "[\(named)]" : named
        baseURL = "\(scheme)://\(host):\(port)"
        startTimer()
        logger.debug("listening on \(baseURL)")
        return baseURL
    }

    func addRoom(named name: String, stateFile: String?) throws -> String {
        guard Self.isRoomName(name) else { throw RoomServerError.badRoomName(name) }
        var room = Room(name: name, limits: limits)
        if let stateFile, FileManager.default.fileExists(atPath: stateFile) {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: stateFile))
                let snapshot = try JSONDecoder().decode(RoomSnapshot.self, from: data)
                guard snapshot.name == name else {
                    throw RoomServerError.stateFile(stateFile, reason: "it holds room '\(snapshot.name)', not '\(name)'")
                }
                room = Room(restoring: snapshot, limits: limits, now: .now)
                logger.info("room \(name) restored with \(snapshot.participants.count) participants within their grace period")
            } catch let error as RoomServerError {
                throw error
            } catch is DecodingError {
                throw RoomServerError.stateFile(stateFile, reason: "it is not a room state written by sharectl serve")
            } catch {
                throw RoomServerError.stateFile(stateFile, reason: error.localizedDescription)
            }
        }
        let hosted = HostedRoom(room: room, stateFile: stateFile)
        rooms[name] = hosted
        try save(hosted)
        return "\(baseURL)/r/\(name)?t=\(room.token)"
    }

    func stop() {
        if let timer {
            g_source_destroy(timer)
            g_source_unref(timer)
            self.timer = nil
        }
        for socket in sockets.values { socket.close(code: 1001, reason: "server stopping") }
        for hosted in rooms.values { try? save(hosted) }
        if let server {
            soup_server_disconnect(server)
            g_object_unref(UnsafeMutableRawPointer(server))
            self.server = nil
        }
        sockets.removeAll()
    }

    // MARK: HTTP

    private func http(_ message: OpaquePointer, path: String, query: OpaquePointer?) {
        let method = soup_server_message_get_method(message).map { String(cString: $0) } ?? ""
        let token = query.flatMap { g_hash_table_lookup($0, "t") }.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard method == "GET" || method == "HEAD" else {
            return respond(message, 405, "text/plain; charset=utf-8", Array("Only GET is served here.\n".utf8))
        }
        switch parts.first {
        case "ws", "r":
            guard parts.count == 2, let hosted = rooms[parts[1]], let token, hosted.room.accepts(token: token) else {
                logger.notice("refused \(path): no such room, or the token is not the room's")
                return respond(message, 403, "text/plain; charset=utf-8",
                               Array("Refused: no such room, or the invite token is not this room's.\n".utf8))
            }
            if parts[0] == "ws" { return }  // no status: the WebSocket upgrade goes on
            guard let page = client.file("room.html") else { return respond(message, 500, "text/plain", Array("client missing\n".utf8)) }
            respond(message, 200, page.contentType, page.bytes)
        case "client":
            guard parts.count == 2, let file = client.file(parts[1]) else {
                return respond(message, 404, "text/plain; charset=utf-8", Array("Not found.\n".utf8))
            }
            respond(message, 200, file.contentType, file.bytes)
        default:
            respond(message, 404, "text/plain; charset=utf-8", Array("Not found. Open the room's invite link.\n".utf8))
        }
    }

    private func respond(_ message: OpaquePointer, _ status: UInt32, _ contentType: String, _ body: [UInt8]) {
        soup_server_message_set_status(message, status, nil)
        let headers = soup_server_message_get_response_headers(message)
        soup_message_headers_replace(headers, "Cache-Control", "no-store")
        soup_message_headers_replace(headers, "X-Content-Type-Options", "nosniff")
        soup_message_headers_replace(headers, "Content-Security-Policy",
                                     "default-src 'self'; connect-src 'self' ws: wss:; media-src 'self' blob: mediastream:; img-src 'self' data:")
        body.withUnsafeBufferPointer { buffer in
            soup_server_message_set_response(message, contentType, SOUP_MEMORY_COPY, buffer.baseAddress, gsize(buffer.count))
        }
    }

    // MARK: WebSockets

    private func accepted(_ connection: OpaquePointer, path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 2, let hosted = rooms[parts[1]] else {
            soup_websocket_connection_close(connection, 1008, "no such room")
            return
        }
        let id = nextConnection
        nextConnection += 1
        let socket = RoomSocket(id: id, roomName: parts[1], connection: connection, owner: self,
                                maxPayload: limits.maxFrameBytes)
        sockets[id] = socket
        hosted.room.connected(id, now: .now)
        logger.debug("connection \(id) opened in room \(parts[1])")
    }

    func text(_ text: String, from socket: RoomSocket) {
        guard let hosted = rooms[socket.roomName] else { return }
        apply(hosted.room.received(text, from: socket.id, now: .now), in: hosted)
    }

    func binary(byteCount: Int, from socket: RoomSocket) {
        guard let hosted = rooms[socket.roomName] else { return }
        apply(hosted.room.receivedBinary(byteCount: byteCount, from: socket.id, now: .now), in: hosted)
    }

    func closed(_ socket: RoomSocket) {
        sockets[socket.id] = nil
        logger.debug("connection \(socket.id) closed (code \(socket.closeCode))")
        guard let hosted = rooms[socket.roomName] else { return }
        apply(hosted.room.disconnected(socket.id, now: .now), in: hosted)
    }

    private func apply(_ outputs: [RoomOutput], in hosted: HostedRoom) {
        for output in outputs {
            switch output {
            case .send(let id, let text): sockets[id]?.send(text)
            case .close(let id, let code, let reason): sockets[id]?.close(code: code, reason: reason)
            }
        }
        if hosted.room.revision != hosted.savedRevision {
            let who = hosted.room.participants.map { "\($0.name) (\($0.id)\($0.sharing ? ", sharing" : ""))" }
            logger.info("room \(hosted.room.name): \(who.isEmpty ? "nobody" : who.joined(separator: ", "))")
            do { try save(hosted) } catch { logger.warning("\(error)") }
        }
    }

    private func startTimer() {
        let source = g_timeout_source_new(1000)!
        g_source_set_callback(source, { data in
            ServerState.from(callbackUserData: data).tick()
            return 1
        }, userData, nil)
        g_source_attach(source, g_main_context_get_thread_default())
        timer = source
    }

    private func tick() {
        let now = ContinuousClock.now
        for hosted in rooms.values { apply(hosted.room.tick(now: now), in: hosted) }
    }

    /// Writes the room's snapshot (to a new file, then renamed over the old one).
    private func save(_ hosted: HostedRoom) throws {
        hosted.savedRevision = hosted.room.revision
        guard let path = hosted.stateFile else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(hosted.room.snapshot)
            let temporary = path + ".new"
            try data.write(to: URL(fileURLWithPath: temporary))
            chmod(temporary, 0o600)
            guard rename(temporary, path) == 0 else {
                throw RoomServerError.stateFile(path, reason: String(cString: strerror(errno)))
            }
        } catch let error as RoomServerError {
            throw error
        } catch {
            throw RoomServerError.stateFile(path, reason: "\(error)")
        }
    }

    static func isRoomName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_" }
    }

    private static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return String(cString: error.pointee.message)
    }
}

@available(*, unavailable) extension ServerState: Sendable {}

/// One accepted WebSocket: owns a reference to the `SoupWebsocketConnection` and its signal
/// handlers, released in `deinit`. Loop thread only.
final class RoomSocket {
    let id: ConnectionID
    let roomName: String
    private let connection: OpaquePointer
    private unowned let owner: ServerState
    private var handlers: [gulong] = []
    private(set) var closeCode = 0

    init(id: ConnectionID, roomName: String, connection: OpaquePointer, owner: ServerState, maxPayload: Int) {
        self.id = id
        self.roomName = roomName
        self.connection = connection
        self.owner = owner
        g_object_ref(UnsafeMutableRawPointer(connection))
        // The room refuses frames over `maxPayload` with a clean close (1009) once it has them.
        // libsoup's own ceiling sits above that, so such a frame still arrives whole, while a
        // huge one is cut off by libsoup before it is held (an abrupt close, without the code).
        soup_websocket_connection_set_max_incoming_payload_size(connection, guint64(maxPayload) * 4)
        soup_websocket_connection_set_keepalive_interval(connection, 10)
        let data = Unmanaged.passUnretained(self).toOpaque()
        let onMessage: @convention(c) (OpaquePointer?, gint, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, type, bytes, data in
            RoomSocket.from(callbackUserData: data).message(type: type, bytes: bytes)
        }
        let onClosed: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            RoomSocket.from(callbackUserData: data).closedByLibsoup()
        }
        let instance = UnsafeMutableRawPointer(connection)
        handlers = [
            g_signal_connect_data(instance, "message", unsafeBitCast(onMessage, to: GCallback.self), data, nil, GConnectFlags(0)),
            g_signal_connect_data(instance, "closed", unsafeBitCast(onClosed, to: GCallback.self), data, nil, GConnectFlags(0)),
        ]
    }

    deinit {
        let instance = UnsafeMutableRawPointer(connection)
        for handler in handlers { g_signal_handler_disconnect(instance, handler) }
        g_object_unref(instance)
    }

    static func from(callbackUserData data: UnsafeMutableRawPointer?) -> RoomSocket {
        Unmanaged<RoomSocket>.fromOpaque(data!).takeUnretainedValue()
    }

    private var isOpen: Bool { soup_websocket_connection_get_state(connection) == SOUP_WEBSOCKET_STATE_OPEN }

    func send(_ text: String) {
        guard isOpen else { return }
        soup_websocket_connection_send_text(connection, text)
    }

    func close(code: UInt16, reason: String) {
        guard isOpen else { return }
        soup_websocket_connection_close(connection, gushort(code), reason)
    }

    private func message(type: gint, bytes: OpaquePointer?) {
        var size: gsize = 0
        let pointer = g_bytes_get_data(bytes, &size)
        if type == gint(SOUP_WEBSOCKET_DATA_TEXT.rawValue) {
            let text = pointer.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(size)), as: UTF8.self) } ?? ""
            owner.text(text, from: self)
        } else {
            owner.binary(byteCount: Int(size), from: self)
        }
    }

    private func closedByLibsoup() {
        closeCode = Int(soup_websocket_connection_get_close_code(connection))
        owner.closed(self)
    }
}

@available(*, unavailable) extension RoomSocket: Sendable {}
