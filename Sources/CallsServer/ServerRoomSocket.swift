internal import CGIO
internal import CShareSoup
internal import CSoup
import Foundation
import GLibLoop
import ShareCore
import RoomProtocol

/// One accepted WebSocket: owns a reference to the `SoupWebsocketConnection` and its signal
/// handlers, released in `deinit`. Loop thread only.
///
/// libsoup 3.2 keeps a socket's output in a queue without a bound and says nothing of its length,
/// so the socket counts what it hands over and asks the kernel how much the peer's TCP has
/// acknowledged: the difference, output not yet taken by the peer, is capped. (Over TLS the
/// acknowledged bytes include the records' overhead, so the count is a little low.)
final class RoomSocket {
    enum Kind { case room, janus }
    let id: ConnectionID
    /// A room's own socket, or a participant's Janus API proxied (`serve --sfu janus`).
    let kind: Kind
    let roomName: String
    /// The peer's address, as libsoup gives it.
    let address: String
    private let connection: OpaquePointer
    private unowned let owner: ServerState
    private var handlers: [gulong] = []
    private(set) var closeCode = 0
    /// When the peer last answered a ping (at first: when the socket was accepted).
    private(set) var lastPong: ContinuousClock.Instant
    private let maxUnread: Int
    private let descriptor: Int32
    private let ackedAtStart: Int64
    private var handedOver: Int64 = 0

    init(
        id: ConnectionID, roomName: String, address: String, connection: OpaquePointer, owner: ServerState,
        limits: RoomLimits, now: ContinuousClock.Instant, kind: Kind = .room
    ) {
        self.id = id
        self.kind = kind
        self.roomName = roomName
        self.address = address
        self.connection = connection
        self.owner = owner
        lastPong = now
        maxUnread = limits.maxSocketOutputBytes
        g_object_ref(UnsafeMutableRawPointer(connection))
        // libsoup keeps the socket under the stolen stream (soup_server_connection_steal).
        let stream = soup_websocket_connection_get_io_stream(connection)
        let socket = stream.flatMap {
            g_object_get_data(UnsafeMutableRawPointer($0).assumingMemoryBound(to: GObject.self), "GSocket")
        }
        descriptor = socket.map { g_socket_get_fd($0.assumingMemoryBound(to: GSocket.self)) } ?? -1
        ackedAtStart = descriptor >= 0 ? max(0, CShareSoup_tcp_bytes_acked(descriptor)) : 0
        // The room refuses frames over `maxFrameBytes` with a clean close (1009) once it has them.
        // libsoup's own ceiling sits above that, so such a frame still arrives whole, while a
        // huge one is cut off by libsoup before it is held (an abrupt close, without the code).
        soup_websocket_connection_set_max_incoming_payload_size(connection, guint64(limits.maxFrameBytes) * 4)
        // A ping goes out behind the output already queued: its pong says the peer has read it all.
        soup_websocket_connection_set_keepalive_interval(
            connection, guint(max(1, limits.keepaliveInterval.components.seconds)))
        let data = Unmanaged.passUnretained(self).toOpaque()
        let onMessage: @convention(c) (OpaquePointer?, gint, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
            _, type, bytes, data in
            RoomSocket.from(callbackUserData: data).message(type: type, bytes: bytes)
        }
        let onPong: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, _, data in
            RoomSocket.from(callbackUserData: data).lastPong = .now
        }
        let onClosed: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            RoomSocket.from(callbackUserData: data).closedByLibsoup()
        }
        let instance = UnsafeMutableRawPointer(connection)
        handlers = [
            g_signal_connect_data(
                instance, "message", unsafeBitCast(onMessage, to: GCallback.self), data, nil, GConnectFlags(0)),
            g_signal_connect_data(
                instance, "pong", unsafeBitCast(onPong, to: GCallback.self), data, nil, GConnectFlags(0)),
            g_signal_connect_data(
                instance, "closed", unsafeBitCast(onClosed, to: GCallback.self), data, nil, GConnectFlags(0))
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

    /// Output handed to libsoup that the peer has not acknowledged yet (0 when the kernel does not say).
    var unreadBytes: Int {
        guard descriptor >= 0 else { return 0 }
        let acked = CShareSoup_tcp_bytes_acked(descriptor)
        guard acked >= 0 else { return 0 }
        return Int(max(0, handedOver - (acked - ackedAtStart)))
    }

    /// Queues a text frame; false when the peer has fallen more than the limit behind.
    func send(_ text: String) -> Bool {
        guard isOpen else { return true }
        soup_websocket_connection_send_text(connection, text)
        let payload = text.utf8.count
        handedOver += Int64(payload + (payload < 126 ? 2 : payload < 65536 ? 4 : 10))
        return unreadBytes <= maxUnread
    }
    func close(code: UInt16, reason: String) {
        guard isOpen else { return }
        soup_websocket_connection_close(connection, gushort(code), reason)
    }

    private func message(type: gint, bytes: OpaquePointer?) {
        var size: gsize = 0
        let pointer = g_bytes_get_data(bytes, &size)
        if type == gint(SOUP_WEBSOCKET_DATA_TEXT.rawValue) {
            let text =
                pointer.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(size)), as: UTF8.self) }
                ?? ""
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
