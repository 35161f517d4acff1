// RFC 9725 WebRTC-HTTP Ingestion Protocol (WHIP), the client's side of the HTTP exchanges:
//
//   POST endpoint (application/sdp offer)        → 201 Created, Location, ETag, Link*, SDP answer
//   PATCH session (trickle-ice-sdpfrag, If-Match: ETag) → 204 (405/501/422: no trickle here)
//   PATCH session (trickle-ice-sdpfrag, If-Match: *)    → 200 + the server's new sdpfrag (ICE restart)
//   DELETE session                                → ends it
//
// Media is not this type's concern: it takes an offer string and returns the answer.
import Foundation
import ShareCore

/// One WHIP session with one endpoint: publish an offer, trickle candidates, restart ICE, stop.
///
/// - The bearer token goes on every request, and only to the endpoint's origin (scheme, host and
///   port). A 307/308 redirect is followed here (not by libsoup) with the same method, body and
///   token, at most `maxRedirects` times, never back to a URL already visited. A redirect or a
///   201's Location to another origin (another host or port, or https to http) is refused before
///   any request goes there.
/// - A 503 with Retry-After (seconds or an HTTP date) is waited out, at most `maxRetryAfter` at a
///   time and `maxAttempts` POSTs in all.
/// - Trickle is tried until the server says it has none (405, 501 or 422 to the first PATCH);
///   candidates then travel only in the offer.
/// - Every header is matched without regard to case; every malformed answer is refused with a
///   `WHIPError` that says what was wrong.
public actor WHIPClient {
    public struct Configuration: Sendable {
        /// The WHIP endpoint URL (http or https).
        public var endpoint: String
        public var bearerToken: String?
        /// For each HTTP exchange (a redirect hop or a retry gets its own).
        public var timeout: Duration = .seconds(10)
        public var maxRedirects = 5
        /// POSTs in all when the server keeps answering 503.
        public var maxAttempts = 4
        /// The longest wait a Retry-After can ask for; longer asks are cut to this.
        public var maxRetryAfter: Duration = .seconds(30)
        /// ICE servers taken from the 201's Link headers; the rest are ignored with one warning
        /// (each is resolved and tried, so a server must not be able to ask for hundreds).
        public var maxICEServers = 8

        public init(endpoint: String, bearerToken: String? = nil) {
            self.endpoint = endpoint
            self.bearerToken = bearerToken
        }
    }

    /// What a successful publish returns.
    public struct Session: Hashable, Sendable {
        /// The session URL (the Location, resolved against the URL that answered).
        public var resourceURL: String
        /// The SDP answer, as received.
        public var answer: String
        /// STUN/TURN servers from the Link headers, in order, at most `maxICEServers`.
        public var iceServers: [WHIPICEServer]
        /// The ETag of the 201, if the server sent one.
        public var etag: String?
    }

    public enum TrickleSupport: Hashable, Sendable { case unknown, supported, unsupported }

    public enum TrickleOutcome: Hashable, Sendable {
        /// The server took the candidates.
        case sent
        /// The server has no trickle (this time or before); candidates are only in the offer.
        case notSupported
    }

    public let configuration: Configuration
    private let http: HTTPClient
    private let logger: Logger
    private let sleep: @Sendable (Duration) async throws -> Void
    private let wallClock: @Sendable () -> Date

    public private(set) var session: Session?
    /// The latest ETag seen for the session (the 201's, or an ICE restart's).
    public private(set) var etag: String?
    public private(set) var trickleSupport = TrickleSupport.unknown

    /// - Parameters:
    ///   - sleep: waits out a Retry-After (tests pass one that records instead of waiting).
    ///   - wallClock: the time an HTTP-date Retry-After is measured from.
    public init(
        configuration: Configuration, http: HTTPClient, logger: Logger = .disabled,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) throws(WHIPError) {
        guard HTTPURL.scheme(of: configuration.endpoint) != nil else { throw .invalidURL(configuration.endpoint) }
        if let token = configuration.bearerToken,
            token.isEmpty || token.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        {
            throw .invalidToken
        }
        self.configuration = configuration
        self.http = http
        self.logger = logger
        self.sleep = sleep
        self.wallClock = wallClock
    }

    // MARK: - Publish

    /// POSTs `offer` and returns the session. One session per client at a time.
    public func publish(offer: String) async throws(WHIPError) -> Session {
        if let session { throw .alreadyPublished(resource: session.resourceURL) }
        let endpoint = configuration.endpoint
        for attempt in 1...max(1, configuration.maxAttempts) {
            let response = try await send(
                "POST", endpoint, headers: ["Content-Type": "application/sdp"],
                body: Array(offer.utf8))
            guard response.status == 503 else { return try await accept(response) }
            guard let value = response.headers["Retry-After"], let delay = RetryAfter.delay(value, now: wallClock())
            else {
                throw refusal(response)
            }
            guard attempt < configuration.maxAttempts else { throw .busy(url: endpoint, attempts: attempt) }
            let wait = min(delay, configuration.maxRetryAfter)
            logger.notice(
                "WHIP: \(redactedURL(endpoint)) is busy (503); trying again in \(wait.secondsText)",
                ["whip.attempt": "\(attempt)", "whip.retry_after": value])
            do { try await sleep(wait) } catch { throw .cancelled(url: endpoint) }
        }
        throw .busy(url: endpoint, attempts: configuration.maxAttempts)
    }

    /// Checks a POST's answer and keeps the session, or refuses the answer (and ends a session the
    /// server made anyway).
    private func accept(_ response: HTTPResponse) async throws(WHIPError) -> Session {
        let url = response.url
        switch response.status {
        case 201: break
        case 400...599: throw refusal(response)
        default: throw .unexpectedStatus(url: url, status: response.status, expected: "201 Created")
        }
        guard let location = response.headers["Location"] else { throw .missingLocation(url: url) }
        guard let resource = HTTPURL.resolve(location, against: url) else {
            throw .badLocation(url: url, location: location)
        }
        guard HTTPOrigin(resource) == HTTPOrigin(configuration.endpoint) else {
            // Ending that session would take the token there: the server ends it when no media comes.
            throw .locationLeavesOrigin(url: url, status: response.status, location: resource)
        }
        let problem: WHIPError? = {
            guard response.mediaType == "application/sdp" else {
                return .notSDP(url: url, contentType: response.headers["Content-Type"])
            }
            let answer = response.text
            guard !answer.isEmpty else { return .emptyAnswer(url: url) }
            let firstLine = answer.prefix { !$0.isNewline }
            guard firstLine == "v=0" else { return .invalidAnswer(url: url, firstLine: String(firstLine.prefix(60))) }
            return nil
        }()
        if let problem {
            // The server made a session we cannot use: end it, so it does not wait for media.
            logger.warning(
                "WHIP: refusing the answer; ending the session it created",
                ["whip.resource": redactedURL(resource), "whip.problem": problem.description])
            await delete(resource)
            throw problem
        }
        let links = WHIPICEServer.parse(linkFields: response.headers.values("Link"))
        let limit = max(0, configuration.maxICEServers)
        for reason in links.skipped.prefix(limit) { logger.warning("WHIP: ignoring an ICE server: \(reason)") }
        if links.skipped.count > limit {
            logger.warning(
                "WHIP: ignoring \(links.skipped.count - limit) more ICE servers the answer names that "
                    + "could not be used")
        }
        if links.servers.count > limit {
            logger.warning(
                "WHIP: the answer names \(links.servers.count) ICE servers; using the first \(limit) and "
                    + "ignoring the rest", ["whip.ice_servers": "\(links.servers.count)"])
        }
        let servers = Array(links.servers.prefix(limit))
        let session = Session(
            resourceURL: resource, answer: response.text, iceServers: servers,
            etag: response.headers["ETag"])
        self.session = session
        etag = session.etag
        trickleSupport = .unknown
        logger.info(
            "WHIP: session created", ["whip.resource": redactedURL(resource), "whip.ice_servers": "\(servers.count)"])
        return session
    }

    // MARK: - Trickle and ICE restart

    /// Sends local candidates (RFC 9725 §4.4.1). Returns `.notSupported`, without error, when the
    /// server has no trickle: its first PATCH was answered 405, 501 or 422.
    public func trickle(_ fragment: TrickleICEFragment) async throws(WHIPError) -> TrickleOutcome {
        guard let session else { throw .notPublished }
        if trickleSupport == .unsupported { return .notSupported }
        let body = try serialize(fragment, url: session.resourceURL)
        var headers: HTTPHeaders = ["Content-Type": "application/trickle-ice-sdpfrag"]
        if let etag { headers.add("If-Match", etag) }
        let response = try await send("PATCH", session.resourceURL, headers: headers, body: body)
        switch response.status {
        case 200...299:
            trickleSupport = .supported
            if let newTag = response.headers["ETag"] { etag = newTag }
            return .sent
        case let status where [405, 501, 422].contains(status) && trickleSupport == .unknown:
            trickleSupport = .unsupported
            logger.info(
                "WHIP: the server has no trickle ICE (\(response.status)); candidates go only in the offer",
                ["whip.resource": redactedURL(session.resourceURL)])
            return .notSupported
        case 412:
            throw .etagMismatch(url: session.resourceURL)
        case 400...599:
            throw refusal(response)
        default:
            throw .unexpectedStatus(url: session.resourceURL, status: response.status, expected: "204 No Content")
        }
    }

    /// Restarts ICE (RFC 9725 §4.4.2): sends the new credentials and candidates with `If-Match: *`
    /// and returns the server's new fragment (its new ufrag, pwd and candidates).
    public func restartICE(_ fragment: TrickleICEFragment) async throws(WHIPError) -> TrickleICEFragment {
        guard let session else { throw .notPublished }
        let url = session.resourceURL
        let body = try serialize(fragment, url: url)
        // RFC 9110 §13.1.1: the wildcard is a bare "*" (RFC 9725's prose quotes it).
        let headers: HTTPHeaders = ["Content-Type": "application/trickle-ice-sdpfrag", "If-Match": "*"]
        let response = try await send("PATCH", url, headers: headers, body: body)
        switch response.status {
        case 200...299: break
        case 405, 501, 422: throw .iceRestartNotSupported(url: url, status: response.status)
        case 412: throw .etagMismatch(url: url)
        case 400...599: throw refusal(response)
        default: throw .unexpectedStatus(url: url, status: response.status, expected: "200 OK")
        }
        guard response.mediaType == "application/trickle-ice-sdpfrag" else {
            throw .invalidFragment(
                url: url,
                reason: "its Content-Type is "
                    + (response.headers["Content-Type"].map { "'\($0)'" } ?? "missing"))
        }
        let remote: TrickleICEFragment
        do { remote = try TrickleICEFragment.parse(response.text) } catch {
            throw .invalidFragment(url: url, reason: error.description)
        }
        guard remote.iceUfrag != nil, remote.icePwd != nil else {
            throw .invalidFragment(url: url, reason: "it has no a=ice-ufrag or no a=ice-pwd")
        }
        if let newTag = response.headers["ETag"] { etag = newTag }
        trickleSupport = .supported
        logger.info("WHIP: ICE restarted", ["whip.resource": redactedURL(url)])
        return remote
    }

    // MARK: - Stop

    /// Ends the session with DELETE. Never throws: a failure is logged (the server ends sessions
    /// that go quiet anyway).
    public func stop() async {
        guard let session else { return }
        self.session = nil
        etag = nil
        trickleSupport = .unknown
        await delete(session.resourceURL)
    }

    private func delete(_ resource: String) async {
        do {
            let response = try await send("DELETE", resource, headers: [:], body: [])
            if (200...299).contains(response.status) {
                logger.info("WHIP: session ended", ["whip.resource": redactedURL(resource)])
            } else {
                logger.warning(
                    "WHIP: ending the session failed: \(refusal(response))", ["whip.resource": redactedURL(resource)])
            }
        } catch {
            logger.warning("WHIP: ending the session failed: \(error)", ["whip.resource": redactedURL(resource)])
        }
    }

    // MARK: - HTTP with WHIP's redirect rules

    /// One request, following 307/308 with the same method, body and token within the endpoint's
    /// origin.
    private func send(_ method: String, _ start: String, headers: HTTPHeaders, body: [UInt8])
        async throws(WHIPError) -> HTTPResponse
    {
        let home = HTTPOrigin(configuration.endpoint)
        var url = start
        var visited: Set<String> = [start]
        var redirects = 0
        while true {
            var request = HTTPRequest(method: method, url: url, headers: headers, body: body)
            if let token = configuration.bearerToken { request.headers.set("Authorization", "Bearer \(token)") }
            let response: HTTPResponse
            do {
                response = try await http.send(request, timeout: configuration.timeout)
            } catch let error as HTTPError {
                throw WHIPError(error)
            } catch {
                throw .cancelled(url: url)
            }
            switch response.status {
            case 307, 308:
                guard let location = response.headers["Location"] else {
                    throw .redirectWithoutLocation(url: url, status: response.status)
                }
                guard let next = HTTPURL.resolve(location, against: url) else {
                    throw .badLocation(url: url, location: location)
                }
                guard HTTPOrigin(next) == home else {
                    throw .locationLeavesOrigin(url: url, status: response.status, location: next)
                }
                guard !visited.contains(next) else { throw .redirectLoop(url: next) }
                redirects += 1
                guard redirects <= configuration.maxRedirects else {
                    throw .tooManyRedirects(url: start, limit: configuration.maxRedirects)
                }
                logger.info(
                    "WHIP: \(method) redirected (\(response.status))",
                    ["whip.from": redactedURL(url), "whip.to": redactedURL(next)])
                visited.insert(next)
                url = next
            case 300...399:
                throw .unexpectedStatus(
                    url: url, status: response.status,
                    expected: "307 or 308 for a redirect (they keep the method and body)")
            default:
                return response
            }
        }
    }

    private nonisolated func refusal(_ response: HTTPResponse) -> WHIPError {
        .refused(url: response.url, status: response.status, reason: response.reason, firstLine: response.firstBodyLine)
    }

    private func serialize(_ fragment: TrickleICEFragment, url: String) throws(WHIPError) -> [UInt8] {
        do { return Array(try fragment.serialized().utf8) } catch {
            throw .invalidFragment(url: url, reason: error.description)
        }
    }
}
