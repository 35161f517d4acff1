internal import CGIO
internal import CShareSoup
internal import CSoup
import Foundation
import GLibLoop
import ShareCore

/// A share's own small HTTP server (`--metrics-listen HOST:PORT`): GET `/metrics` and `/healthz`,
/// whatever `pages` answers for a path, on libsoup on the process's GLib loop. Anything but GET or
/// HEAD is refused from its headers (405), its body never read; an unknown path is 404.
///
/// Thread safety: the public API may be used from any thread or task; the libsoup server is touched
/// only on the loop thread. `pages` runs on the loop thread and must not block.
public final class StatusServer: Sendable {
    /// One answer.
    public struct Page: Sendable {
        public var status: Int
        public var contentType: String
        public var body: String

        public init(status: Int = 200, contentType: String = "text/plain; charset=utf-8", body: String) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }

    public typealias Pages = @Sendable (_ path: String) -> Page?

    let state: LoopConfined<StatusServerState>

    public init(loop: GLibLoop, pages: @escaping Pages, logger: Logger = .disabled) {
        state = LoopConfined(StatusServerState(pages: pages, logger: logger), on: loop)
    }

    deinit {
        // libsoup's callbacks hold the state unretained: stop them on the loop before it goes.
        state.invoke { $0.stop() }
    }

    /// Listens on `host:port` (0: a free port); returns the base URL with the real port.
    public func start(host: String, port: Int) async throws -> String {
        try await state.perform { try $0.listen(host: host, port: port) }
    }

    public func stop() async {
        _ = try? await state.perform { $0.stop() }
    }

    /// `HOST:PORT` (`[::1]:9464` for IPv6) read into its parts, or a sentence saying what is wrong.
    public static func address(_ text: String) throws -> (host: String, port: Int) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw RoomServerError.badAddress(text) }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw RoomServerError.badAddress(text) }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let number = Int(port), (0...65535).contains(number) else {
            throw RoomServerError.badAddress(text)
        }
        return (String(host), number)
    }
}

/// The status server's libsoup side, on the loop thread only.
final class StatusServerState {
    var server: UnsafeMutablePointer<SoupServer>?
    let pages: StatusServer.Pages
    let logger: Logger

    init(pages: @escaping StatusServer.Pages, logger: Logger) {
        self.pages = pages
        self.logger = logger
    }

    static func from(callbackUserData data: UnsafeMutableRawPointer?) -> StatusServerState {
        Unmanaged<StatusServerState>.fromOpaque(data!).takeUnretainedValue()
    }

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func listen(host: String, port: Int) throws -> String {
        guard server == nil else { throw RoomServerError.listen("\(host):\(port)", reason: "already listening") }
        guard let address = g_inet_socket_address_new_from_string(host, guint(port)) else {
            throw RoomServerError.badAddress("\(host):\(port)")
        }
        defer { g_object_unref(address) }
        let server = CShareSoup_server_new("sharectl")!
        let onRequest: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
            _, message, data in
            StatusServerState.from(callbackUserData: data).requestStarted(message!)
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(server), "request-started", unsafeBitCast(onRequest, to: GCallback.self),
            userData, nil, GConnectFlags(0))
        soup_server_add_handler(
            server, nil,
            { _, message, path, _, data in
                StatusServerState.from(callbackUserData: data).answer(
                    message!, path: path.map { String(cString: $0) } ?? "/")
            }, userData, nil)
        var error: UnsafeMutablePointer<GError>?
        guard soup_server_listen(server, address, SoupServerListenOptions(rawValue: 0), &error) != 0 else {
            g_object_unref(UnsafeMutableRawPointer(server))
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw RoomServerError.listen("\(host):\(port)", reason: reason)
        }
        self.server = server
        var bound = port
        if let uris = soup_server_get_uris(server) {
            if let first = uris.pointee.data { bound = Int(g_uri_get_port(OpaquePointer(first))) }
            g_slist_free_full(uris) { g_uri_unref(OpaquePointer($0)) }
        }
        let shown = host.contains(":") ? "[\(host)]" : host
        return "http://\(shown):\(bound)"
    }

    func requestStarted(_ message: OpaquePointer) {
        let onHeaders: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { message, data in
            StatusServerState.from(callbackUserData: data).headersArrived(message!)
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(message), "got-headers", unsafeBitCast(onHeaders, to: GCallback.self),
            userData, nil, GConnectFlags(0))
    }

    /// Only GET and HEAD without a body go on; anything else is answered from its headers and the
    /// connection closed, the body unread.
    func headersArrived(_ message: OpaquePointer) {
        guard soup_server_message_get_status(message) == 0 else { return }
        let method = soup_server_message_get_method(message).map { String(cString: $0) } ?? ""
        let headers = soup_server_message_get_request_headers(message)
        let encoding = soup_message_headers_get_encoding(headers)
        let hasBody =
            encoding == SOUP_ENCODING_CONTENT_LENGTH
            ? soup_message_headers_get_content_length(headers) > 0 : encoding != SOUP_ENCODING_NONE
        guard method != "GET" && method != "HEAD" || hasBody else { return }
        let body = "Only GET is served here, without a body.\n"
        let response = [
            "HTTP/1.1 405 Method Not Allowed", "Connection: close", "Allow: GET, HEAD",
            "Content-Type: text/plain; charset=utf-8", "Content-Length: \(body.utf8.count)", "", body
        ].joined(separator: "\r\n")
        let bytes = Array(response.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { CShareSoup_answer_and_close(message, $0.baseAddress, $0.count) }
        }
    }

    func answer(_ message: OpaquePointer, path: String) {
        guard soup_server_message_get_status(message) == 0 else { return }
        let page =
            pages(path) ?? StatusServer.Page(status: 404, body: "Not found. Try /metrics or /healthz.\n")
        soup_server_message_set_status(message, guint(page.status), nil)
        let headers = soup_server_message_get_response_headers(message)
        soup_message_headers_replace(headers, "Cache-Control", "no-store")
        let bytes = Array(page.body.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            soup_server_message_set_response(
                message, page.contentType, SOUP_MEMORY_COPY, buffer.baseAddress, gsize(buffer.count))
        }
    }

    func stop() {
        if let server {
            soup_server_disconnect(server)
            g_object_unref(UnsafeMutableRawPointer(server))
            self.server = nil
        }
    }
}
