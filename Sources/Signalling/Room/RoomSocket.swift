internal import CGIO
internal import CSoup
import Foundation
import GLibLoop
import ShareCore
import RoomProtocol

/// One WebSocket to the room server (`ws[s]://HOST:PORT/ws/ROOM?t=TOKEN`) on libsoup 3, its
/// objects on the process's GLib loop thread like `HTTPClient`'s. Text frames arrive on `events`
/// in order, then one `.closed` with the reason; `send` queues a text frame from any thread.
///
/// Thread safety: libsoup objects are touched only on the loop thread (`SocketState`); what
/// crosses threads is the event stream and `Locked`-guarded hand-offs.
public final class RoomSocket: Sendable {
    public enum Event: Sendable, Equatable {
        case text(String)
        /// The socket ended (closed by either side, or failed); no event follows.
        case closed(String)
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Incoming frames and the end. One consumer.
    public let events: AsyncStream<Event>
    private let loop: GLibLoop
    private let state: LoopConfined<SocketState>

    private init(loop: GLibLoop, state: LoopConfined<SocketState>, events: AsyncStream<Event>) {
        self.loop = loop
        self.state = state
        self.events = events
    }

    deinit {
        state.invoke { $0.close(code: 1001) }
    }

    /// Opens the WebSocket; throws a readable reason when the server cannot be reached, refuses
    /// the upgrade (403 for a wrong room or token), or `timeout` passes. `protocols` are offered
    /// as the WebSocket subprotocols (Janus wants `janus-protocol`).
    public static func connect(
        loop: GLibLoop, url: String, timeout: Duration = .seconds(5),
        protocols: [String] = [], logger: Logger = .disabled
    ) async throws -> RoomSocket {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let bound = LoopConfined(
            SocketState(url: url, protocols: protocols, continuation: continuation, logger: logger), on: loop)
        let outcome = ConnectOutcome()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                outcome.install(waiter)
                let timer = DeadlineTimer(after: .milliseconds(Int(timeout.inMilliseconds))) {
                    if outcome.finish(
                        .failure(Failure(description: "\(redactedURL(url)): no WebSocket within \(timeout)")))
                    {
                        bound.invoke { $0.close(code: 1001) }
                    }
                }
                timer.arm()
                outcome.setTimer(timer)
                bound.invoke { $0.start(outcome) }
            }
        } onCancel: {
            if outcome.finish(.failure(CancellationError())) { bound.invoke { $0.close(code: 1001) } }
        }
        return RoomSocket(loop: loop, state: bound, events: events)
    }

    /// Sends one text frame (dropped when the socket has ended).
    public func send(_ text: String) {
        state.invoke { $0.send(text) }
    }

    /// Sends a last text frame (a `leave`, which the server answers by closing) and waits until
    /// the socket has closed, at most `timeout`; then closes it here if it is still open. True when
    /// it closed within the time. (Closing at once would put libsoup's close frame ahead of the
    /// unsent text: a close is queued before any frame not yet begun.)
    public func sendLast(_ text: String, waitingForCloseUpTo timeout: Duration) async -> Bool {
        let closed = Latch()
        state.invoke { $0.sendLast(text, whenClosed: closed) }
        let inTime = await closed.wait(upTo: timeout)
        close()
        return inTime
    }

    /// Closes the socket (1000, normal closure); `events` then ends with `.closed`.
    public func close() {
        state.invoke { $0.close(code: 1000) }
    }
}

/// The once-only result of a connect attempt, raced by libsoup's callback, the deadline and
/// cancellation.
final class ConnectOutcome: Sendable {
    private let state = Locked<
        (waiter: CheckedContinuation<Void, any Error>?, result: Result<Void, any Error>?, timer: DeadlineTimer?)
    >((nil, nil, nil))

    func install(_ waiter: CheckedContinuation<Void, any Error>) {
        let early = state.withLock { s -> Result<Void, any Error>? in
            if let result = s.result { return result }
            s.waiter = waiter
            return nil
        }
        if let early { waiter.resume(with: early) }
    }

    func setTimer(_ timer: DeadlineTimer) {
        let stale = state.withLock { s -> Bool in
            guard s.result == nil else { return true }
            s.timer = timer
            return false
        }
        if stale { timer.cancel() }
    }

    var isFinished: Bool { state.withLock { $0.result != nil } }

    @discardableResult
    func finish(_ result: Result<Void, any Error>) -> Bool {
        let (waiter, timer, first) = state.withLock {
            s -> (CheckedContinuation<Void, any Error>?, DeadlineTimer?, Bool) in
            guard s.result == nil else { return (nil, nil, false) }
            s.result = result
            defer { s.waiter = nil; s.timer = nil }
            return (s.waiter, s.timer, true)
        }
        timer?.cancel()
        waiter?.resume(with: result)
        return first
    }
}

/// The socket's libsoup objects, on the loop thread only. Soup callbacks and signals reach it
/// through the trampoline (`from(callbackUserData:)`); it holds itself (`selfReference`) from the
/// start of the connect until the socket has closed, so a callback never finds it gone.
final class SocketState {
    /// Frames above this close the socket (the protocol caps messages at 256 KiB).
    static let maxIncoming: UInt64 = 256 * 1024

    private let url: String
    private let protocols: [String]
    private let continuation: AsyncStream<RoomSocket.Event>.Continuation
    private let logger: Logger
    private var session: UnsafeMutablePointer<SoupSession>?
    private var message: OpaquePointer?
    private var connection: OpaquePointer?
    private var cancellable: Cancellable?
    private var outcome: ConnectOutcome?
    private var selfReference: SocketState?
    private var ended = false
    /// Opened once the socket has ended (`sendLast` waits on it).
    private var endLatches: [Latch] = []

    init(url: String, protocols: [String], continuation: AsyncStream<RoomSocket.Event>.Continuation, logger: Logger) {
        self.url = url
        self.protocols = protocols
        self.continuation = continuation
        self.logger = logger
    }

    deinit {
        if let connection { g_object_unref(UnsafeMutableRawPointer(connection)) }
        if let message { g_object_unref(UnsafeMutableRawPointer(message)) }
        if let session { g_object_unref(session) }
    }

    static func from(callbackUserData data: UnsafeMutableRawPointer?) -> SocketState {
        Unmanaged<SocketState>.fromOpaque(data!).takeUnretainedValue()
    }

    private var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func start(_ outcome: ConnectOutcome) {
        guard !outcome.isFinished, !ended else { return }
        self.outcome = outcome
        guard let made = soup_message_new("GET", url) else {
            outcome.finish(.failure(RoomSocket.Failure(description: "not a WebSocket address: \(redactedURL(url))")))
            ended = true
            return
        }
        message = made
        let session = soup_session_new()!
        soup_session_set_timeout(session, 0)
        self.session = session
        let cancellable = Cancellable()
        self.cancellable = cancellable
        selfReference = self
        // libsoup copies the protocols into the request's header before it returns.
        var names: [UnsafeMutablePointer<CChar>?] = protocols.map { strdup($0) } + [nil]
        defer { names.forEach { free($0) } }
        names.withUnsafeMutableBufferPointer { list in
            soup_session_websocket_connect_async(
                session, made, nil, protocols.isEmpty ? nil : list.baseAddress, G_PRIORITY_DEFAULT,
                cancellable.pointer,
                { _, result, data in
                    SocketState.from(callbackUserData: data).connected(result)
                }, userData)
        }
    }

    private func connected(_ result: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        let made = soup_session_websocket_connect_finish(session, result, &error)
        if let error {
            let status = message.map { Int(soup_message_get_status($0).rawValue) } ?? 0
            let reason = String(cString: error.pointee.message)
            g_error_free(error)
            let shown = redactedURL(url)
            let text =
                status >= 300 ? "\(shown): the server refused the WebSocket (HTTP \(status))" : "\(shown): \(reason)"
            outcome?.finish(.failure(RoomSocket.Failure(description: text)))
            end(nil)
            return
        }
        guard let made else {
            outcome?.finish(.failure(RoomSocket.Failure(description: "\(redactedURL(url)): no WebSocket")))
            end(nil)
            return
        }
        connection = made
        guard outcome?.finish(.success(())) == true else {  // timed out or cancelled meanwhile
            close(code: 1001)
            return
        }
        soup_websocket_connection_set_max_incoming_payload_size(made, guint64(Self.maxIncoming))
        soup_websocket_connection_set_keepalive_interval(made, 2)
        let onMessage:
            @convention(c) (UnsafeMutableRawPointer?, Int32, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
                _, type, bytes, data in
                SocketState.from(callbackUserData: data).received(type: type, bytes: bytes)
            }
        let onClosed: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            SocketState.from(callbackUserData: data).closedBySoup()
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(made), "message", unsafeBitCast(onMessage, to: GCallback.self), userData, nil,
            GConnectFlags(rawValue: 0))
        g_signal_connect_data(
            UnsafeMutableRawPointer(made), "closed", unsafeBitCast(onClosed, to: GCallback.self), userData, nil,
            GConnectFlags(rawValue: 0))
    }

    private func received(type: Int32, bytes: OpaquePointer?) {
        guard type == Int32(SOUP_WEBSOCKET_DATA_TEXT.rawValue), let bytes else { return }
        var size: gsize = 0
        guard let data = g_bytes_get_data(bytes, &size) else {
            continuation.yield(.text(""))
            return
        }
        let buffer = UnsafeRawBufferPointer(start: data, count: Int(size))
        continuation.yield(.text(String(decoding: buffer, as: UTF8.self)))
    }

    private func closedBySoup() {
        guard let connection else { return end("closed") }
        let code = soup_websocket_connection_get_close_code(connection)
        end("closed by the server (code \(code))")
    }

    func send(_ text: String) {
        guard !ended, let connection else { return }
        let pointer = connection
        guard soup_websocket_connection_get_state(pointer) == SOUP_WEBSOCKET_STATE_OPEN else { return }
        soup_websocket_connection_send_text(pointer, text)
    }

    func sendLast(_ text: String, whenClosed closed: Latch) {
        guard !ended, let connection, soup_websocket_connection_get_state(connection) == SOUP_WEBSOCKET_STATE_OPEN
        else { return closed.open() }
        endLatches.append(closed)
        soup_websocket_connection_send_text(connection, text)
    }

    func close(code: UInt16) {
        guard !ended else { return }
        cancellable?.cancel()
        if let connection {
            let pointer = connection
            if soup_websocket_connection_get_state(pointer) == SOUP_WEBSOCKET_STATE_OPEN {
                soup_websocket_connection_close(pointer, code, nil)
            }
        }
        end("closed here")
    }

    private func end(_ reason: String?) {
        guard !ended else { return }
        ended = true
        if let connection {
            g_signal_handlers_disconnect_matched(
                UnsafeMutableRawPointer(connection), G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, userData)
        }
        continuation.yield(.closed(reason ?? "not connected"))
        continuation.finish()
        for latch in endLatches { latch.open() }
        endLatches = []
        // Let go at the end of this loop iteration, after libsoup's own callback returns.
        let held = selfReference
        selfReference = nil
        _ = held
    }
}

@available(*, unavailable) extension SocketState: Sendable {}
