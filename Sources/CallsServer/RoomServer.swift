internal import CGIO
internal import CShareSoup
internal import CSoup
import Foundation
import GLibLoop
import ShareCore
import RoomProtocol
import Signalling

/// How `RoomServer` listens.
public struct RoomServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// PEM files for HTTPS/WSS; both or neither.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    public var limits: RoomLimits
    /// Web origins (`https://example.org`) whose pages may open the room's WebSocket besides the
    /// server's own; a request without `Origin` (not from a browser) is always let through.
    public var allowedOrigins: [String]

    public init(
        host: String, port: Int, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil,
        limits: RoomLimits = RoomLimits(), allowedOrigins: [String] = []
    ) {
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.limits = limits
        self.allowedOrigins = allowedOrigins
    }
}

public enum RoomServerError: Error, CustomStringConvertible, Sendable {
    case badAddress(String)
    case listen(String, reason: String)
    case tls(reason: String)
    case stateFile(String, reason: String)
    case badRoomName(String)
    case tooManyRooms(Int)
    case clientFilesMissing(String)
    case notStarted

    public var description: String {
        switch self {
        case .badAddress(let text):
            "room server: '\(text)' is not an address to listen on (want HOST:PORT, e.g. 127.0.0.1:8080)"
        case .listen(let address, let reason): "room server: could not listen on \(address): \(reason)"
        case .tls(let reason): "room server: the TLS certificate or key could not be loaded: \(reason)"
        case .stateFile(let path, let reason): "room server: the state file \(path) could not be used: \(reason)"
        case .badRoomName(let name):
            "room server: '\(escapedForLog(name))' is not a room name (letters, digits, '-' and '_', at most 64)"
        case .tooManyRooms(let limit): "room server: it already holds \(limit) rooms, its limit (RoomLimits.maxRooms)"
        case .clientFilesMissing(let looked):
            "room server: the browser client's files were not found (looked in \(looked))"
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
    let loop: GLibLoop
    let state: LoopConfined<ServerState>
    let writer: StateFileWriter
    let logger: Logger
    /// Where rooms run on Janus (`serve --sfu janus`); nil: rooms are a mesh.
    let janus: JanusRooms?

    public init(loop: GLibLoop, client: ClientFiles, janus: JanusRooms? = nil, logger: Logger = .disabled) {
        self.loop = loop
        self.logger = logger
        self.janus = janus
        writer = StateFileWriter(logger: logger)
        state = LoopConfined(ServerState(client: client, writer: writer, logger: logger), on: loop)
        state.invoke { [state] in
            $0.confined = state
            $0.loop = loop
        }
    }

    deinit {
        // libsoup's callbacks hold the state unretained: stop them on the loop before it goes.
        // (The closure keeps the state alive until then; a stopped loop drops it with the process.)
        state.invoke { $0.stop() }
    }

    /// Listens; returns the base URL (`http://HOST:PORT`, the real port when 0 was asked).
    public func start(_ configuration: RoomServerConfiguration) async throws -> String {
        return try await state.perform { try $0.listen(configuration) }
    }

    /// Opens a room (restored from `stateFile` when it holds one, and kept there as it changes);
    /// returns its invite link.
    public func addRoom(named name: String, stateFile: String? = nil) async throws -> String {
        let saved: Data? = if let stateFile { try await writer.read(stateFile) } else { nil }
        let (invite, snapshot) = try await state.perform {
            try $0.addRoom(named: name, stateFile: stateFile, saved: saved)
        }
        if let janus {
            let token = try await state.perform { $0.rooms[name]?.room.token ?? "" }
            do {
                let placement = try await janus.place(name: name, token: token)
                try await state.perform { $0.rooms[name].map { $0.janus = placement } }
            } catch {
                _ = try? await state.perform { $0.removeRoom(named: name) }
                throw error
            }
        }
        if let stateFile, let snapshot {
            do {
                try await writer.writeNow(snapshot, to: stateFile)
            } catch {
                _ = try? await state.perform { $0.removeRoom(named: name) }
                throw error
            }
        }
        return invite
    }

    /// Where a room runs on Janus (nil for a mesh room, or no such room).
    public func placement(ofRoom name: String) async -> JanusPlacement? {
        (try? await state.perform { $0.rooms[name]?.janus }) ?? nil
    }

    /// Closes every connection (1001) and stops listening; rooms on Janus are ended there. The
    /// loop keeps running for its owner.
    public func stop() async {
        let placements = (try? await state.perform { $0.stop() }) ?? []
        if let janus { for placement in placements { await janus.release(placement) } }
        await writer.drain()
    }

    /// The ids of the participants connected to `room` now (for tests).
    func presentIDs(inRoom room: String) async -> [String] {
        return (try? await state.perform { $0.rooms[room]?.room.presentIDs ?? [] }) ?? []
    }

    /// How many times a state file has been written (for tests).
    func stateFileWrites() async -> Int {
        return (try? await state.perform { $0.stateFileWrites }) ?? 0
    }
}

/// One hosted room: the `Room` value, where its snapshot is kept and when it is next written.
final class HostedRoom {
    var room: Room
    let stateFile: String?
    /// Where the room's media runs on Janus (`serve --sfu janus`); nil in a mesh.
    var janus: JanusPlacement?
    var seenRevision = -1
    var schedule = SaveSchedule()
    init(room: Room, stateFile: String?) {
        self.room = room
        self.stateFile = stateFile
    }
}

/// Everything on the loop thread: the `SoupServer`, the rooms and the open WebSockets.
final class ServerState {
    var server: UnsafeMutablePointer<SoupServer>?
    var baseURL = ""
    var limits = RoomLimits()
    var allowedOrigins: Set<String> = []
    var scheme = "http"
    private(set) var rooms: [String: HostedRoom] = [:]
    private(set) var stateFileWrites = 0
    var sockets: [ConnectionID: RoomSocket] = [:]
    var nextConnection = 1
    var timer: UnsafeMutablePointer<GSource>?
    /// The state as other threads reach it (set once, at the start), for the Janus proxy's tasks.
    weak var confined: LoopConfined<ServerState>?
    var loop: GLibLoop?
    /// The Janus proxy: each participant's WebSocket to Janus (by its connection here), what it
    /// sent before that socket was open, and the rule its messages are judged by.
    var upstreams: [ConnectionID: Signalling.RoomSocket] = [:]
    var waitingForUpstream: [ConnectionID: [String]] = [:]
    var proxyRules: [ConnectionID: JanusProxyRule] = [:]
    /// `janus-protocol`, NULL-terminated, for libsoup's WebSocket handler (kept for its lifetime).
    let janusProtocols: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let list = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 2)
        list[0] = strdup("janus-protocol")
        list[1] = nil
        return list
    }()
    let client: ClientFiles
    let writer: StateFileWriter
    let logger: Logger

    init(client: ClientFiles, writer: StateFileWriter, logger: Logger) {
        self.client = client
        self.writer = writer
        self.logger = logger
    }

    static func from(callbackUserData data: UnsafeMutableRawPointer?) -> ServerState {
        Unmanaged<ServerState>.fromOpaque(data!).takeUnretainedValue()
    }

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func listen(_ configuration: RoomServerConfiguration) throws -> String {
        limits = configuration.limits
        allowedOrigins = Set(configuration.allowedOrigins.map(Self.normalizedOrigin))
        guard (0...65535).contains(configuration.port),
            let address = g_inet_socket_address_new_from_string(configuration.host, guint(configuration.port))
        else {
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
        // Every request is judged on its headers first, so a refused body is never read.
        let onRequest: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
            _, message, data in
            ServerState.from(callbackUserData: data).requestStarted(message!)
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(server), "request-started", unsafeBitCast(onRequest, to: GCallback.self),
            userData, nil, GConnectFlags(0))
        soup_server_add_handler(
            server, nil,
            { _, message, path, query, data in
                ServerState.from(callbackUserData: data).http(
                    message!, path: path.map { String(cString: $0) } ?? "/", query: query)
            }, userData, nil)
        // The plain handler on /ws runs first and refuses a bad room or token (403) before the upgrade.
        soup_server_add_handler(
            server, "/ws",
            { _, message, path, query, data in
                ServerState.from(callbackUserData: data).http(
                    message!, path: path.map { String(cString: $0) } ?? "/", query: query)
            }, userData, nil)
        soup_server_add_websocket_handler(
            server, "/ws", nil, nil,
            { _, message, path, connection, data in
                ServerState.from(callbackUserData: data).accepted(
                    connection!, message: message!, path: path.map { String(cString: $0) } ?? "")
            }, userData, nil)
        // A room on Janus: the participant's Janus API, checked the same way, then proxied.
        soup_server_add_handler(
            server, "/janus",
            { _, message, path, query, data in
                ServerState.from(callbackUserData: data).http(
                    message!, path: path.map { String(cString: $0) } ?? "/", query: query)
            }, userData, nil)
        soup_server_add_websocket_handler(
            server, "/janus", nil, janusProtocols,
            { _, message, path, connection, data in
                ServerState.from(callbackUserData: data).acceptedJanus(
                    connection!, message: message!, path: path.map { String(cString: $0) } ?? "")
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
        scheme = options == SOUP_SERVER_LISTEN_HTTPS ? "https" : "http"
        // A wildcard address is no place to send anyone: the link names this machine instead.
        let named =
            ["0.0.0.0", "::"].contains(configuration.host) ? ProcessInfo.processInfo.hostName : configuration.host
        let host = named.contains(":") ? "[\(named)]" : named
        baseURL = "\(scheme)://\(host):\(port)"
        startTimer()
        logger.debug("listening on \(baseURL)")
        return baseURL
    }

    /// Opens the room (restored from `saved`, the state file's bytes, when there are some); returns
    /// its invite link and the snapshot to write before anyone is told of it.
    func addRoom(named name: String, stateFile: String?, saved: Data?) throws -> (String, Data?) {
        guard Self.isRoomName(name) else { throw RoomServerError.badRoomName(name) }
        guard rooms[name] != nil || rooms.count < limits.maxRooms else {
            throw RoomServerError.tooManyRooms(limits.maxRooms)
        }
        var room = Room(name: name, limits: limits)
        if let stateFile, let saved {
            let snapshot: RoomSnapshot
            do {
                snapshot = try JSONDecoder().decode(RoomSnapshot.self, from: saved)
            } catch {
                throw RoomServerError.stateFile(stateFile, reason: "it is not a room state written by sharectl serve")
            }
            guard snapshot.name == name else {
                throw RoomServerError.stateFile(
                    stateFile, reason: "it holds room '\(escapedForLog(snapshot.name))', not '\(name)'")
            }
            room = Room(restoring: snapshot, limits: limits, now: .now)
            logger.info(
                "room \(name) restored with \(snapshot.participants.count) participants within their grace period")
        }
        let hosted = HostedRoom(room: room, stateFile: stateFile)
        hosted.seenRevision = room.revision
        _ = hosted.schedule.changed(now: .now)
        rooms[name] = hosted
        return ("\(baseURL)/r/\(name)?t=\(room.token)", try snapshot(of: hosted))
    }

    /// Takes back a room whose first state-file write failed.
    func removeRoom(named name: String) {
        rooms[name] = nil
    }

    /// Returns the rooms placed on Janus, for the owner to end there.
    @discardableResult
    func stop() -> [JanusPlacement] {
        for upstream in upstreams.values { upstream.close() }
        upstreams.removeAll()
        waitingForUpstream.removeAll()
        proxyRules.removeAll()
        if let timer {
            g_source_destroy(timer)
            g_source_unref(timer)
            self.timer = nil
        }
        for socket in sockets.values { socket.close(code: 1001, reason: "server stopping") }
        for hosted in rooms.values where hosted.schedule.waiting { save(hosted) }
        if let server {
            soup_server_disconnect(server)
            g_object_unref(UnsafeMutableRawPointer(server))
            self.server = nil
        }
        sockets.removeAll()
        return rooms.values.compactMap(\.janus)
    }

    // MARK: WebSockets

    func accepted(_ connection: OpaquePointer, message: OpaquePointer, path: String) {
        guard let (socket, hosted) = admit(connection, message: message, path: path, kind: .room) else { return }
        hosted.room.connected(socket.id, now: .now)
        logger.debug("connection \(socket.id) opened in room \(socket.roomName)")
    }

    /// A WebSocket upgraded on `/ws/ROOM` or `/janus/ROOM` (the token checked already): its
    /// socket, kept, when the room is there (on Janus for `.janus`) and its address has fewer than
    /// the limit open; else it is closed (1008) and nil.
    func admit(_ connection: OpaquePointer, message: OpaquePointer, path: String, kind: RoomSocket.Kind)
        -> (RoomSocket, HostedRoom)?
    {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 2, let hosted = rooms[parts[1]], kind == .room || hosted.janus != nil else {
            soup_websocket_connection_close(connection, 1008, kind == .room ? "no such room" : "no such room on Janus")
            return nil
        }
        let address = Self.remoteHost(message)
        guard sockets.values.count(where: { $0.address == address }) < limits.maxSocketsPerAddress else {
            soup_websocket_connection_close(connection, 1008, "too many connections")
            return nil
        }
        let id = nextConnection
        nextConnection += 1
        let socket = RoomSocket(
            id: id, roomName: parts[1], address: address, connection: connection, owner: self,
            limits: limits, now: .now, kind: kind)
        sockets[id] = socket
        return (socket, hosted)
    }

    func text(_ text: String, from socket: RoomSocket) {
        if socket.kind == .janus { return proxy(text, from: socket) }
        guard let hosted = rooms[socket.roomName] else { return }
        apply(hosted.room.received(text, from: socket.id, now: .now), in: hosted)
    }

    func binary(byteCount: Int, from socket: RoomSocket) {
        if socket.kind == .janus { return socket.close(code: 1003, reason: "Janus's API is text") }
        guard let hosted = rooms[socket.roomName] else { return }
        apply(hosted.room.receivedBinary(byteCount: byteCount, from: socket.id, now: .now), in: hosted)
    }

    func closed(_ socket: RoomSocket) {
        guard sockets[socket.id] === socket else { return }
        sockets[socket.id] = nil
        logger.debug("connection \(socket.id) closed (code \(socket.closeCode))")
        if socket.kind == .janus { return proxyClosed(socket) }
        guard let hosted = rooms[socket.roomName] else { return }
        apply(hosted.room.disconnected(socket.id, now: .now), in: hosted)
    }

    /// Ends a connection whose peer is not keeping up (not reading, or not answering pings) at
    /// once: its participant is absent from now on, and what is sent to it waits in the room's
    /// queue, which is capped, rather than in the socket's, which is not.
    func drop(_ socket: RoomSocket, why: String) {
        logger.notice("connection \(socket.id) closed: \(why)", ["room.connection": "\(socket.id)"])
        socket.close(code: 1008, reason: why)
        closed(socket)  // the socket goes with the last reference to it; libsoup closes its stream
    }

    func apply(_ outputs: [RoomOutput], in hosted: HostedRoom) {
        var behind: [RoomSocket] = []
        for output in outputs {
            switch output {
            case .send(let id, let text):
                if let socket = sockets[id], !socket.send(text) { behind.append(socket) }
            case .close(let id, let code, let reason): sockets[id]?.close(code: code, reason: reason)
            }
        }
        for socket in behind where sockets[socket.id] === socket {
            drop(socket, why: "more than \(limits.maxSocketOutputBytes) bytes unread")
        }
        if hosted.room.revision != hosted.seenRevision {
            hosted.seenRevision = hosted.room.revision
            let who = hosted.room.participants.map {
                "\(escapedForLog($0.name)) (\($0.id)\($0.sharing ? ", sharing" : ""))"
            }
            logger.info("room \(hosted.room.name): \(who.isEmpty ? "nobody" : who.joined(separator: ", "))")
            if hosted.schedule.changed(now: .now) { save(hosted) }
        }
    }

    func startTimer() {
        let source = g_timeout_source_new(1000)!
        g_source_set_callback(
            source,
            { data in
                ServerState.from(callbackUserData: data).tick()
                return 1
            }, userData, nil)
        g_source_attach(source, g_main_context_get_thread_default())
        timer = source
    }

    func tick() {
        let now = ContinuousClock.now
        let silent = sockets.values.filter { now - $0.lastPong > limits.keepaliveInterval + limits.pongTimeout }
        for socket in silent.sorted(by: { $0.id < $1.id }) { drop(socket, why: "no pong") }
        for hosted in rooms.values {
            apply(hosted.room.tick(now: now), in: hosted)
            if hosted.schedule.due(now: now) { save(hosted) }
        }
    }

    /// Hands the room's snapshot to the writer's queue (never written on the loop thread).
    func save(_ hosted: HostedRoom) {
        guard let path = hosted.stateFile else { return }
        do {
            guard let data = try snapshot(of: hosted) else { return }
            writer.write(data, to: path)
        } catch {
            logger.warning("\(error)")
        }
    }

    func snapshot(of hosted: HostedRoom) throws -> Data? {
        guard let path = hosted.stateFile else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(hosted.room.snapshot)
            stateFileWrites += 1
            return data
        } catch {
            throw RoomServerError.stateFile(path, reason: "\(error)")
        }
    }

    static func isRoomName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_"
            }
    }

    static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return String(cString: error.pointee.message)
    }
}

@available(*, unavailable) extension ServerState: Sendable {}
