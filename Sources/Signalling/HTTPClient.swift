internal import CGIO
internal import CSoup
import Dispatch
import GLibLoop
import ShareCore

/// An HTTP/1.1 client on libsoup 3. Its `SoupSession` lives on the process's GLib loop thread:
/// requests are started there with `soup_session_send_async`, their bodies read there in chunks,
/// and the result handed to the Swift caller through a continuation, so an awaiting caller never
/// blocks a thread.
///
/// What it does not do, on purpose:
/// - It follows no redirects (`SOUP_MESSAGE_NO_REDIRECT`): a 3xx comes back as a response.
///   WHIP must resolve 307/308 itself to keep the method, body and bearer token.
/// - It accepts at most `maxBodyBytes` of response body (a hostile server cannot fill memory).
///
/// Each request has a deadline for the whole exchange (connect, send, headers and body); it is
/// kept by a Dispatch timer, so it fires even if the loop is wedged or stopped. Cancelling the
/// caller's task cancels the request.
///
/// Thread safety: the public API may be used from any thread or task. libsoup objects are touched
/// only on the loop thread (`SessionState`, `SoupExchange`); what crosses threads is `Locked`-guarded
/// (`RequestCompletion`) or thread-safe by GLib's contract (`GCancellable`).
public final class HTTPClient: Sendable {
    public static let defaultMaxBodyBytes = 1 << 20

    private let loop: GLibLoop
    private let state: LoopConfined<SessionState>
    private let logger: Logger
    /// Responses with a larger body are refused with `HTTPError.bodyTooLarge`.
    public let maxBodyBytes: Int

    public init(
        loop: GLibLoop, maxBodyBytes: Int = HTTPClient.defaultMaxBodyBytes, userAgent: String = "sharectl",
        logger: Logger = .disabled
    ) {
        self.loop = loop
        self.maxBodyBytes = maxBodyBytes
        self.logger = logger
        state = LoopConfined(SessionState(userAgent: userAgent, logger: logger), on: loop)
    }

    deinit {
        // The session must go on the thread it was made on. Requests in flight hold the client, so
        // none is left when this runs. If the loop has already stopped the session is not freed
        // (it is the process's end); freeing it here could race libsoup's own sources.
        state.invoke { $0.close() }
    }

    /// Sends `request` and returns the response, whatever its status (3xx, 4xx and 5xx included).
    /// Throws `HTTPError` when no complete response arrives: bad URL, connection failure,
    /// `timeout` passed, body over `maxBodyBytes`, the task cancelled or the loop stopped.
    public func send(_ request: HTTPRequest, timeout: Duration = .seconds(10)) async throws -> HTTPResponse {
        let scheme = request.url.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https", request.url.contains("://") else {
            throw HTTPError.invalidURL(request.url)
        }
        let completion = RequestCompletion()
        let cancellable = Cancellable()
        let url = request.url
        let state = self.state
        let limit = maxBodyBytes
        logger.debug("\(request.method) \(redactedURL(url))", ["http.method": request.method])
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                completion.install(continuation)
                // The outcome is settled before the cancel, which libsoup reports as "cancelled".
                completion.startTimer(after: timeout, failing: .timedOut(url: url, after: timeout)) {
                    cancellable.cancel()
                }
                // Work the loop drops unrun (it has stopped) fails the request rather than leave
                // the caller waiting.
                loop.invoke(
                    {
                        state.value.start(request, limit: limit, completion: completion, cancellable: cancellable)
                    }, ifDropped: { completion.finish(.failure(.loopStopped)) })
            }
        } onCancel: {
            completion.finish(.failure(.cancelled(url: url)))
            cancellable.cancel()
        }
    }
}

// MARK: - Completion (any thread)

/// The once-only hand-off of a request's outcome to its awaiting caller. The soup callbacks (loop
/// thread), the deadline timer (a Dispatch queue) and task cancellation race to finish it; the
/// first wins and later ones are ignored.
final class RequestCompletion: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var outcome: Result<HTTPResponse, HTTPError>?
        var timer: DeadlineTimer?
    }
    private let state = Locked(State())

    var isFinished: Bool { state.withLock { $0.outcome != nil } }

    func install(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let early = state.withLock { state -> Result<HTTPResponse, HTTPError>? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early.mapError { $0 as any Error }) }
    }

    /// Fails the request with `error` when `interval` passes first, then runs `afterwards`.
    func startTimer(after interval: Duration, failing error: HTTPError, afterwards: @escaping @Sendable () -> Void) {
        let nanoseconds = max(0, Int(interval.inNanoseconds))
        let timer = DeadlineTimer(after: .nanoseconds(nanoseconds)) { [weak self] in
            if self?.finish(.failure(error)) == true { afterwards() }
        }
        timer.arm()  // a suspended source must never be released, so arm it first in every case
        let stale = state.withLock { state -> Bool in
            guard state.outcome == nil else { return true }
            state.timer = timer
            return false
        }
        if stale { timer.cancel() }
    }

    /// Delivers `outcome` unless another already was. Returns whether this one was delivered.
    @discardableResult
    func finish(_ outcome: Result<HTTPResponse, HTTPError>) -> Bool {
        typealias Taken = (
            continuation: CheckedContinuation<HTTPResponse, any Error>?, timer: DeadlineTimer?,
            first: Bool
        )
        let (continuation, timer, first) = state.withLock { state -> Taken in
            guard state.outcome == nil else { return (nil, nil, false) }
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer, true)
        }
        timer?.cancel()
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        return first
    }
}

/// One `GCancellable`, released in `deinit`. `g_cancellable_cancel` may be called from any thread.
final class Cancellable: Sendable {
    nonisolated(unsafe) let pointer: UnsafeMutablePointer<GCancellable>
    init() { pointer = g_cancellable_new() }
    deinit { g_object_unref(pointer) }
    func cancel() { g_cancellable_cancel(pointer) }
}

// MARK: - Loop-thread side

/// The `SoupSession` and the exchanges in flight. Made on any thread, used only on the loop thread.
final class SessionState {
    private var session: UnsafeMutablePointer<SoupSession>?
    private var exchanges: [ObjectIdentifier: SoupExchange] = [:]
    private let userAgent: String
    private let logger: Logger
    private var closed = false

    init(userAgent: String, logger: Logger) {
        self.userAgent = userAgent
        self.logger = logger
    }

    /// The session, made on first use so it belongs to the loop thread's context.
    private func ensureSession() -> UnsafeMutablePointer<SoupSession> {
        if let session { return session }
        let made = soup_session_new()!
        soup_session_set_user_agent(made, userAgent)
        // libsoup's own I/O timeout stays off; each request's deadline is ours (RequestCompletion).
        soup_session_set_timeout(made, 0)
        session = made
        return made
    }

    func start(_ request: HTTPRequest, limit: Int, completion: RequestCompletion, cancellable: Cancellable) {
        guard !completion.isFinished else { return }  // cancelled or timed out before the loop got to it
        guard !closed else {
            completion.finish(.failure(.loopStopped))
            return
        }
        let exchange = SoupExchange(
            owner: self, request: request, limit: limit, completion: completion,
            cancellable: cancellable, logger: logger)
        exchanges[ObjectIdentifier(exchange)] = exchange
        exchange.start(session: ensureSession())
    }

    func remove(_ exchange: SoupExchange) { exchanges[ObjectIdentifier(exchange)] = nil }

    /// Ends the session: requests still in flight are cancelled by libsoup and end through their
    /// callbacks (each holds this state until then).
    func close() {
        closed = true
        guard let session else { return }
        soup_session_abort(session)
        g_object_unref(session)
        self.session = nil
    }
}

@available(*, unavailable) extension SessionState: Sendable {}

/// One request on the loop thread: the `SoupMessage`, its response stream and the body read so far.
/// Kept alive by `SessionState.exchanges` until it ends, and keeping its `SessionState` alive in
/// turn (a cycle that `end` breaks): so a client released while a request is still winding down
/// (cancelled or timed out, libsoup not yet called back) leaves both in place for that callback.
/// Soup callbacks reach it through the trampoline (`from(callbackUserData:)`).
final class SoupExchange {
    private let owner: SessionState
    private let request: HTTPRequest
    private let limit: Int
    private let completion: RequestCompletion
    private let cancellable: Cancellable
    private let logger: Logger
    private var session: UnsafeMutablePointer<SoupSession>?
    private var message: OpaquePointer?
    private var stream: UnsafeMutablePointer<GInputStream>?
    private var status = 0
    private var reason = ""
    private var headers = HTTPHeaders()
    private var body: [UInt8] = []

    init(
        owner: SessionState, request: HTTPRequest, limit: Int, completion: RequestCompletion,
        cancellable: Cancellable, logger: Logger
    ) {
        self.owner = owner
        self.request = request
        self.limit = limit
        self.completion = completion
        self.cancellable = cancellable
        self.logger = logger
    }

    deinit {
        if let stream { g_object_unref(stream) }
        if let message { g_object_unref(UnsafeMutableRawPointer(message)) }
        if let session { g_object_unref(session) }
    }

    static func from(callbackUserData data: UnsafeMutableRawPointer?) -> SoupExchange {
        Unmanaged<SoupExchange>.fromOpaque(data!).takeUnretainedValue()
    }

    private var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func start(session: UnsafeMutablePointer<SoupSession>) {
        // Held until this exchange goes, so a client closed meanwhile cannot free it under us.
        self.session = session
        g_object_ref(session)
        guard let message = soup_message_new(request.method, request.url) else {
            end(.failure(.invalidURL(request.url)))
            return
        }
        self.message = message
        soup_message_add_flags(message, SOUP_MESSAGE_NO_REDIRECT)
        let requestHeaders = soup_message_get_request_headers(message)
        for field in request.headers { soup_message_headers_append(requestHeaders, field.name, field.value) }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method.uppercased()) {
            let bytes = request.body.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
            // A nil content type keeps the Content-Type field the caller set.
            soup_message_set_request_body_from_bytes(message, nil, bytes)
            g_bytes_unref(bytes)
        }
        soup_session_send_async(
            session, message, G_PRIORITY_DEFAULT, cancellable.pointer,
            { _, result, data in
                SoupExchange.from(callbackUserData: data).sent(result)
            }, userData)
    }

    private func sent(_ result: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        let stream = soup_session_send_finish(session, result, &error)
        if let error {
            end(.failure(Self.failure(error, url: request.url)))
            return
        }
        self.stream = stream
        status = Int(soup_message_get_status(message).rawValue)
        reason = soup_message_get_reason_phrase(message).map { String(cString: $0) } ?? ""
        var iterator = SoupMessageHeadersIter()
        soup_message_headers_iter_init(&iterator, soup_message_get_response_headers(message))
        var name: UnsafePointer<CChar>?
        var value: UnsafePointer<CChar>?
        while soup_message_headers_iter_next(&iterator, &name, &value) != 0 {
            headers.add(String(cString: name!), String(cString: value!))
        }
        if let length = headers["Content-Length"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
            length > limit
        {
            end(.failure(.bodyTooLarge(url: request.url, limit: limit)))
            return
        }
        readMore()
    }

    private func readMore() {
        guard !completion.isFinished else {  // timed out or cancelled meanwhile
            end(nil)
            return
        }
        let chunk = min(64 * 1024, limit - body.count + 1)
        g_input_stream_read_bytes_async(
            stream, gsize(chunk), G_PRIORITY_DEFAULT, cancellable.pointer,
            { _, result, data in
                SoupExchange.from(callbackUserData: data).read(result)
            }, userData)
    }

    private func read(_ result: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        let bytes = g_input_stream_read_bytes_finish(stream, result, &error)
        if let error {
            end(.failure(Self.failure(error, url: request.url)))
            return
        }
        defer { g_bytes_unref(bytes) }
        var size: gsize = 0
        let data = g_bytes_get_data(bytes, &size)
        if size == 0 {
            var url = request.url
            if let uri = soup_message_get_uri(message), let text = g_uri_to_string(uri) {
                url = String(cString: text)
                g_free(text)
            }
            end(.success(HTTPResponse(status: status, reason: reason, headers: headers, body: body, url: url)))
            return
        }
        body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: Int(size)))
        if body.count > limit {
            end(.failure(.bodyTooLarge(url: request.url, limit: limit)))
            return
        }
        readMore()
    }

    /// Delivers the outcome (nil: someone else already did) and lets go of everything.
    private func end(_ outcome: Result<HTTPResponse, HTTPError>?) {
        if let outcome { completion.finish(outcome) }
        if let stream {
            // Freeing the stream closes it. For a body not read to its end (too large, timed
            // out), libsoup 3 then marks the message finished without reading the rest and
            // drops the connection: an endless body costs nothing more.
            g_object_unref(stream)
            self.stream = nil
        }
        owner.remove(self)
    }

    private static func failure(_ error: UnsafeMutablePointer<GError>, url: String) -> HTTPError {
        defer { g_error_free(error) }
        if error.pointee.domain == g_io_error_quark(), error.pointee.code == G_IO_ERROR_CANCELLED.rawValue {
            return .cancelled(url: url)
        }
        return .transport(url: url, reason: String(cString: error.pointee.message))
    }
}

@available(*, unavailable) extension SoupExchange: Sendable {}
