internal import CGIO
internal import CShareSoup
internal import CSoup
import Foundation
import GLibLoop
import ShareCore
import RoomProtocol

/// Plain HTTP: the client's files, room links, the refusals, and the browser policies.
extension ServerState {
    // MARK: HTTP

    func requestStarted(_ message: OpaquePointer) {
        let onHeaders: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { message, data in
            ServerState.from(callbackUserData: data).headersArrived(message!)
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(message), "got-headers", unsafeBitCast(onHeaders, to: GCallback.self),
            userData, nil, GConnectFlags(0))
    }

    /// Runs once a request's headers are in (after libsoup's own checks), before any of its body
    /// is read: only GET and HEAD without a body go on; anything else is answered and the
    /// connection closed, the body unread.
    func headersArrived(_ message: OpaquePointer) {
        guard soup_server_message_get_status(message) == 0 else { return }  // libsoup has refused it already
        let method = soup_server_message_get_method(message).map { String(cString: $0) } ?? ""
        let headers = soup_server_message_get_request_headers(message)
        let path = soup_server_message_get_uri(message).flatMap { g_uri_get_path($0) }.map { String(cString: $0) } ?? ""
        if method != "GET" && method != "HEAD" {
            logger.notice(
                "refused a \(escapedForLog(method, limit: 16)) request for \(escapedForLog(path)): only GET is served")
            return answerAndClose(
                message, 405, "Method Not Allowed", "Only GET is served here.\n", extra: ["Allow: GET, HEAD"])
        }
        let encoding = soup_message_headers_get_encoding(headers)
        let length =
            encoding == SOUP_ENCODING_CONTENT_LENGTH ? Int(soup_message_headers_get_content_length(headers)) : 0
        if encoding != SOUP_ENCODING_NONE && encoding != SOUP_ENCODING_CONTENT_LENGTH
            || length > limits.maxRequestBodyBytes
        {
            logger.notice("refused a request for \(escapedForLog(path)) with a body")
            return answerAndClose(message, 413, "Content Too Large", "A request here has no body.\n")
        }
    }

    /// Writes a whole response on the connection, taken from libsoup, and closes it.
    func answerAndClose(_ message: OpaquePointer, _ status: Int, _ reason: String, _ body: String, extra: [String] = [])
    {
        var lines = [
            "HTTP/1.1 \(status) \(reason)", "Connection: close", "Content-Type: text/plain; charset=utf-8",
            "Content-Length: \(body.utf8.count)"
        ]
        lines += policyHeaders(for: message).map { "\($0.0): \($0.1)" } + extra
        let response = Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
        response.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { CShareSoup_answer_and_close(message, $0.baseAddress, $0.count) }
        }
    }

    func http(_ message: OpaquePointer, path: String, query: OpaquePointer?) {
        let method = soup_server_message_get_method(message).map { String(cString: $0) } ?? ""
        let token = query.flatMap { g_hash_table_lookup($0, "t") }.map {
            String(cString: $0.assumingMemoryBound(to: CChar.self))
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard method == "GET" || method == "HEAD" else {  // refused at its headers already
            return respond(message, 405, "text/plain; charset=utf-8", Array("Only GET is served here.\n".utf8))
        }
        switch parts.first {
        case "ws", "r", "janus", "sfu":
            guard parts.count == 2, let hosted = rooms[parts[1]], let token, hosted.room.accepts(token: token) else {
                logger.notice("refused \(escapedForLog(path)): no such room, or the token is not the room's")
                return respond(
                    message, 403, "text/plain; charset=utf-8",
                    Array("Refused: no such room, or the invite token is not this room's.\n".utf8))
            }
            if parts[0] == "sfu" {
                // Where the room's media goes: a mesh, or Janus behind this server's /janus door.
                var answer: [String: JSONValue] = ["sfu": .string("mesh")]
                if let placement = hosted.janus {
                    answer = [
                        "sfu": .string("janus"), "janus": .string("/janus/\(parts[1])"), "room": .int(placement.room),
                        "pin": .string(placement.pin)
                    ]
                }
                return respond(message, 200, "application/json", Array(JSONValue.object(answer).text.utf8))
            }
            if parts[0] == "janus", hosted.janus == nil {
                return respond(
                    message, 404, "text/plain; charset=utf-8", Array("This room is a mesh; it has no Janus.\n".utf8))
            }
            if parts[0] == "ws" || parts[0] == "janus" {
                if let origin = header(message, "Origin"), !originAllowed(origin, host: header(message, "Host")) {
                    logger.notice("refused a WebSocket from the page origin \(escapedForLog(origin))")
                    return respond(
                        message, 403, "text/plain; charset=utf-8",
                        Array(
                            "Refused: pages from another site may not open this room (see sharectl serve --allow-origin).\n"
                                .utf8))
                }
                let address = Self.remoteHost(message)
                if sockets.values.count(where: { $0.address == address }) >= limits.maxSocketsPerAddress {
                    logger.notice(
                        "refused a WebSocket from \(escapedForLog(address)): it has \(limits.maxSocketsPerAddress) open"
                    )
                    return respond(
                        message, 429, "text/plain; charset=utf-8",
                        Array("Refused: too many connections from your address.\n".utf8))
                }
                return  // no status: the WebSocket upgrade goes on
            }
            guard let page = client.file(hosted.janus == nil ? "room.html" : "janus-room.html") else {
                return respond(message, 500, "text/plain", Array("client missing\n".utf8))
            }
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

    func respond(_ message: OpaquePointer, _ status: UInt32, _ contentType: String, _ body: [UInt8]) {
        soup_server_message_set_status(message, status, nil)
        let headers = soup_server_message_get_response_headers(message)
        for (name, value) in policyHeaders(for: message) { soup_message_headers_replace(headers, name, value) }
        body.withUnsafeBufferPointer { buffer in
            soup_server_message_set_response(
                message, contentType, SOUP_MEMORY_COPY, buffer.baseAddress, gsize(buffer.count))
        }
    }

    /// The headers on every response. The page's address holds the room's token: no referrer
    /// carries it away, no other site frames the page, and the page connects only back here.
    func policyHeaders(for message: OpaquePointer) -> [(String, String)] {
        let host =
            header(message, "Host").flatMap { Self.isHostHeader($0) ? $0 : nil }
            ?? baseURL.split(separator: "/").dropFirst().first.map(String.init) ?? "localhost"
        let socketScheme = scheme == "https" ? "wss" : "ws"
        let policy =
            "default-src 'self'; connect-src 'self' \(socketScheme)://\(host); media-src 'self' blob: mediastream:; "
            + "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        return [
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
            ("Content-Security-Policy", policy)
        ]
    }

    /// A page may open the room's socket when it came from this server (its origin names the host
    /// the request was sent to) or from an origin given with --allow-origin.
    func originAllowed(_ origin: String, host: String?) -> Bool {
        let origin = Self.normalizedOrigin(origin)
        if let host, origin == "\(scheme)://\(host.lowercased())" { return true }
        return allowedOrigins.contains(origin)
    }

    static func normalizedOrigin(_ origin: String) -> String {
        var origin = origin.lowercased()
        while origin.hasSuffix("/") { origin.removeLast() }
        return origin
    }

    /// A `Host` header fit to be named in a policy: a name or address and a port, nothing more.
    static func isHostHeader(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255
            && host.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-:[]".unicodeScalars.contains($0))
            }
    }

    func header(_ message: OpaquePointer, _ name: String) -> String? {
        soup_message_headers_get_one(soup_server_message_get_request_headers(message), name).map { String(cString: $0) }
    }

    static func remoteHost(_ message: OpaquePointer) -> String {
        soup_server_message_get_remote_host(message).map { String(cString: $0) } ?? "unknown"
    }
}
