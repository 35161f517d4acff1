import CallsClient
import Foundation
import ShareCore
import Testing
@testable import Signalling

/// The WHIP client against a real, scriptable, sometimes hostile WHIP endpoint
/// (scripts/whip-test-server.py on 127.0.0.1), checking what the server received.
@Suite struct WHIPClientTests {
    static let offer = """
        v=0\r
        o=- 1 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=mid:0\r
        a=sendonly\r
        a=ice-ufrag:cl1a\r
        a=ice-pwd:clientpassword0123456789\r
        a=setup:actpass\r
        a=rtpmap:96 H264/90000\r

        """

    static let localFragment = TrickleICEFragment(
        iceUfrag: "cl1a", icePwd: "clientpassword0123456789",
        media: [
            .init(
                mid: "0", mediaLine: "video 9 UDP/TLS/RTP/SAVPF 96",
                candidates: ["a=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host"])
        ])

    static let restartFragment = TrickleICEFragment(
        iceUfrag: "cl2b", icePwd: "newclientpassword0123456789",
        media: [
            .init(
                mid: "0", candidates: ["candidate:3 1 udp 2130706431 127.0.0.1 50002 typ host"],
                endOfCandidates: true)
        ])

    /// Records the waits asked for instead of waiting.
    final class SleepRecorder: Sendable {
        private let waits = Locked<[Duration]>([])
        var recorded: [Duration] { waits.withLock { $0 } }
        var sleep: @Sendable (Duration) async throws -> Void { { [self] in record($0) } }
        private func record(_ duration: Duration) { waits.withLock { $0.append(duration) } }
    }

    func client(
        _ server: WHIPTestServer, _ path: String, token: String? = nil, timeout: Duration = .seconds(10),
        logger: Logger = .disabled, sleep: (@Sendable (Duration) async throws -> Void)? = nil,
        now: Date = Date()
    ) throws -> WHIPClient {
        var configuration = WHIPClient.Configuration(endpoint: server.url(path), bearerToken: token)
        configuration.timeout = timeout
        let http = HTTPClient(loop: TestLoop.shared)
        if let sleep {
            return try WHIPClient(
                configuration: configuration, http: http, logger: logger, sleep: sleep,
                wallClock: { now })
        }
        return try WHIPClient(configuration: configuration, http: http, logger: logger, wallClock: { now })
    }

    // MARK: - The happy paths

    @Test func publishesAndDeletesOnStop() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/ok")
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.resourceURL.hasPrefix(server.url("/resource/ok/")))
        #expect(session.answer.hasPrefix("v=0\r\n"))
        #expect(session.etag == "\"ok-1\"")
        #expect(session.iceServers.isEmpty)
        await whip.stop()
        #expect(await whip.session == nil)

        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.method) == ["POST", "DELETE"])
        #expect(log[0].header("Content-Type") == "application/sdp")
        #expect(log[0].body == Self.offer)
        #expect(log[0].header("Authorization") == nil, "no token configured, none sent")
        #expect(server.url(log[1].path) == session.resourceURL)
    }

    @Test func relativeLocationIsResolvedAgainstTheRequestURL() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/app/relative-location")
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.resourceURL == server.url("/app/sessions/7?x=1"))
        await whip.stop()
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.last?.method == "DELETE")
        #expect(log.last?.path == "/app/sessions/7?x=1")
    }

    @Test(arguments: ["/redirect-307", "/redirect-308"])
    func tokenGoesOnEveryRequestAcrossRedirects(start: String) async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, start, token: "s3cret")
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.resourceURL.hasPrefix(server.url("/resource/needs-token/")))
        #expect(try await whip.trickle(Self.localFragment) == .notSupported)  // that session has no trickle
        await whip.stop()

        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.method) == ["POST", "POST", "PATCH", "DELETE"])
        #expect(log.map(\.path).prefix(2) == [start, "/needs-token"])
        for request in log {
            #expect(request.header("Authorization") == "Bearer s3cret", "\(request.method) \(request.path)")
        }
        #expect(log[1].body == Self.offer, "the redirect keeps the body")
        #expect(log[1].header("Content-Type") == "application/sdp")
    }

    @Test func missingTokenIsRefusedWithTheServersWords() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/needs-token")
        let url = server.url("/needs-token")
        await #expect(
            throws: WHIPError.refused(
                url: url, status: 401, reason: "Unauthorized",
                firstLine: "missing or wrong bearer token")
        ) {
            try await whip.publish(offer: Self.offer)
        }
        let error = WHIPError.refused(
            url: url, status: 401, reason: "Unauthorized",
            firstLine: "missing or wrong bearer token")
        #expect(
            error.description
                == "WHIP: \(url) answered 401 Unauthorized: missing or wrong bearer token — check the bearer token")
    }

    // MARK: - Trickle and ICE restart

    @Test func trickleSendsAnSdpfragWithIfMatchThenICERestartSwapsCredentials() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/trickle")
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.etag == "\"t-1\"")

        #expect(try await whip.trickle(Self.localFragment) == .sent)
        #expect(await whip.trickleSupport == .supported)

        let remote = try await whip.restartICE(Self.restartFragment)
        #expect(remote.iceUfrag == "srv2")
        #expect(remote.icePwd == "restartedpassword0123456789")
        #expect(
            remote.media == [
                .init(
                    mid: "0", mediaLine: "video 9 UDP/TLS/RTP/SAVPF 96",
                    candidates: ["2 1 udp 2130706431 127.0.0.1 40002 typ host"],
                    endOfCandidates: true)
            ])
        #expect(await whip.etag == "\"t-2\"")

        // After the restart, trickle carries the new ETag (the server answers 412 to the old one).
        #expect(try await whip.trickle(Self.restartFragment) == .sent)
        await whip.stop()

        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "PATCH", "DELETE"])
        let patches = log.filter { $0.method == "PATCH" }
        #expect(patches.map { $0.header("If-Match") } == ["\"t-1\"", "*", "\"t-2\""])
        for patch in patches {
            #expect(patch.header("Content-Type") == "application/trickle-ice-sdpfrag")
            #expect(server.url(patch.path) == session.resourceURL)
            #expect(throws: Never.self) { try TrickleICEFragment.parse(patch.body) }
        }
        #expect(
            patches[0].body == """
                a=ice-ufrag:cl1a\r
                a=ice-pwd:clientpassword0123456789\r
                m=video 9 UDP/TLS/RTP/SAVPF 96\r
                a=mid:0\r
                a=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r

                """)
        #expect(
            patches[1].body == """
                a=ice-ufrag:cl2b\r
                a=ice-pwd:newclientpassword0123456789\r
                m=audio 9 RTP/AVP 0\r
                a=mid:0\r
                a=candidate:3 1 udp 2130706431 127.0.0.1 50002 typ host\r
                a=end-of-candidates\r

                """)
    }

    @Test func a405ToTheFirstPatchTurnsTrickleOffForTheSession() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/no-trickle")
        _ = try await whip.publish(offer: Self.offer)
        #expect(try await whip.trickle(Self.localFragment) == .notSupported)
        #expect(await whip.trickleSupport == .unsupported)
        #expect(try await whip.trickle(Self.localFragment) == .notSupported)
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.filter { $0.method == "PATCH" }.count == 1, "no second PATCH once the server said no")
        #expect(log.first { $0.method == "PATCH" }?.header("If-Match") == "\"nt-1\"")

        let url = await whip.session!.resourceURL
        await #expect(throws: WHIPError.iceRestartNotSupported(url: url, status: 405)) {
            try await whip.restartICE(Self.restartFragment)
        }
        await whip.stop()
    }

    @Test func aStaleETagIsReportedAsAMismatch() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/trickle")
        let session = try await whip.publish(offer: Self.offer)
        // Someone else restarts ICE on the session: its ETag moves on.
        let http = HTTPClient(loop: TestLoop.shared)
        let other = try await http.send(
            HTTPRequest(
                method: "PATCH", url: session.resourceURL,
                headers: ["Content-Type": "application/trickle-ice-sdpfrag", "If-Match": "*"],
                body: Array(try Self.restartFragment.serialized().utf8)))
        #expect(other.status == 200)
        await #expect(throws: WHIPError.etagMismatch(url: session.resourceURL)) {
            try await whip.trickle(Self.localFragment)
        }
        await whip.stop()
    }

    @Test func trickleBeforePublishAndPublishingTwiceAreRefused() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/ok")
        await #expect(throws: WHIPError.notPublished) { try await whip.trickle(Self.localFragment) }
        let session = try await whip.publish(offer: Self.offer)
        await #expect(throws: WHIPError.alreadyPublished(resource: session.resourceURL)) {
            try await whip.publish(offer: Self.offer)
        }
        await whip.stop()
        await whip.stop()  // a second stop does nothing
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.method) == ["POST", "DELETE"])
    }

    // MARK: - Busy servers

    @Test func a503WithRetryAfterIsWaitedOutThenRetried() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/busy")  // Retry-After: 1, really waited
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.resourceURL.contains("/resource/busy/"))
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.method) == ["POST", "POST"])
        #expect(log[1].body == Self.offer)
        await whip.stop()
    }

    @Test func longRetryAfterIsCutToTheBoundAndHTTPDatesAreRead() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let recorder = SleepRecorder()
        let seconds = try client(server, "/busy?retry-after=120", sleep: recorder.sleep)
        _ = try await seconds.publish(offer: Self.offer)
        #expect(recorder.recorded == [.seconds(30)])

        // An HTTP date 7 s after the client's (fixed) wall clock.
        let now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
        let dated = SleepRecorder()
        let query = "Tue,%2014%20Nov%202023%2022:13:27%20GMT"
        let date = try client(server, "/busy?retry-after=\(query)", sleep: dated.sleep, now: now)
        _ = try await date.publish(offer: Self.offer)
        #expect(dated.recorded == [.seconds(7)])
        await seconds.stop()
        await date.stop()
    }

    @Test func aServerBusyForeverGivesUpAfterTheLastAttempt() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let recorder = SleepRecorder()
        let whip = try client(server, "/busy?times=always&retry-after=2", sleep: recorder.sleep)
        let url = server.url("/busy?times=always&retry-after=2")
        await #expect(throws: WHIPError.busy(url: url, attempts: 4)) { try await whip.publish(offer: Self.offer) }
        #expect(recorder.recorded == [.seconds(2), .seconds(2), .seconds(2)])
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.count == 4)
    }

    // MARK: - ICE servers from Link headers

    @Test func linkHeadersBecomeICEServers() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/ice-servers")
        let session = try await whip.publish(offer: Self.offer)
        #expect(
            session.iceServers == [
                WHIPICEServer(uri: "stun:stun.example.net", scheme: .stun, host: "stun.example.net", port: 3478),
                WHIPICEServer(
                    uri: "turn:turn.example.net?transport=udp", scheme: .turn, host: "turn.example.net",
                    port: 3478, transport: .udp, username: "user", credential: "pa;ss,word"),
                WHIPICEServer(
                    uri: "turns:turn.example.net:5349?transport=tcp", scheme: .turns, host: "turn.example.net",
                    port: 5349, transport: .tcp, username: "user2", credential: "p2"),
                WHIPICEServer(uri: "stun:[::1]:3479", scheme: .stun, host: "::1", port: 3479)
            ])
        await whip.stop()
    }

    /// A server cannot make the client resolve and try any number of servers: the first 8 are
    /// kept, the rest ignored with one warning.
    @Test func iceServersFromLinkHeadersAreCappedWithOneWarning() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let capture = LogCapture()
        let whip = try client(server, "/many-ice-servers", logger: capture.logger())
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.iceServers.map(\.host) == (1...8).map { "s\($0).example.net" })
        let warnings = capture.all.filter { $0.level == .warning }.map(\.message)
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("20") == true, "\(warnings)")
        await whip.stop()
    }

    @Test func headerNamesAndMediaTypesMatchWhateverTheirCase() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/shouting")
        let session = try await whip.publish(offer: Self.offer)
        #expect(session.resourceURL.hasPrefix(server.url("/resource/shouting/")))
        #expect(session.etag == "\"loud-1\"")
        #expect(session.iceServers.map(\.host) == ["loud.example.net"])
        await whip.stop()
    }

    // MARK: - Hostile and broken servers

    enum Hostile: String, CaseIterable, Sendable {
        case notSDP = "/not-sdp", noLocation = "/no-location", hugeBody = "/huge-body", error400 = "/error-400"
        case emptyAnswer = "/empty-answer", notV0 = "/not-v0", badLocationScheme = "/bad-location-scheme"
        case redirectLoop = "/redirect-loop", redirectChain = "/redirect-chain?left=6"
        case redirectScheme = "/redirect-scheme", redirectNoLocation = "/redirect-no-location"
        case redirect302 = "/redirect-302", unknownPath = "/nothing-here"

        func expected(_ server: WHIPTestServer) -> WHIPError {
            let url = server.url(rawValue)
            switch self {
            case .notSDP: return .notSDP(url: url, contentType: "text/html")
            case .noLocation: return .missingLocation(url: url)
            case .hugeBody: return .answerTooLarge(url: url, limit: 1 << 20)
            case .error400:
                return .refused(
                    url: url, status: 400, reason: "Bad Request", firstLine: "bad offer: no H.264 in the offer")
            case .emptyAnswer: return .emptyAnswer(url: url)
            case .notV0: return .invalidAnswer(url: url, firstLine: "hello")
            case .badLocationScheme: return .badLocation(url: url, location: "ftp://127.0.0.1/x")
            case .redirectLoop: return .redirectLoop(url: url)
            case .redirectChain: return .tooManyRedirects(url: url, limit: 5)
            case .redirectScheme:
                return .locationLeavesOrigin(url: url, status: 307, location: "https://127.0.0.1:\(server.port)/ok")
            case .redirectNoLocation: return .redirectWithoutLocation(url: url, status: 307)
            case .redirect302:
                return .unexpectedStatus(
                    url: url, status: 302,
                    expected: "307 or 308 for a redirect (they keep the method and body)")
            case .unknownPath:
                return .refused(url: url, status: 404, reason: "Not Found", firstLine: "no such endpoint")
            }
        }
    }

    @Test(arguments: Hostile.allCases)
    func malformedAnswersAreRefusedWithAClearError(_ hostile: Hostile) async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, hostile.rawValue)
        let expected = hostile.expected(server)
        await #expect(throws: expected) { try await whip.publish(offer: Self.offer) }
        #expect(await whip.session == nil)
        #expect(expected.description.hasPrefix("WHIP: "))
    }

    /// The bearer token goes only to the endpoint's origin (scheme, host and port): a redirect or a
    /// 201's Location to another origin is refused before any request goes there (127.0.0.2 is the
    /// same test server as another host; the port beside it is another origin too).
    @Test(arguments: ["/redirect-other-host", "/redirect-other-port", "/location-other-host"])
    func theTokenNeverLeavesTheEndpointsOrigin(path: String) async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, path, token: "s3cret")
        let url = server.url(path)
        let expected: WHIPError =
            switch path {
            case "/redirect-other-host":
                .locationLeavesOrigin(url: url, status: 307, location: "http://127.0.0.2:\(server.port)/needs-token")
            case "/redirect-other-port":
                .locationLeavesOrigin(
                    url: url, status: 307, location: "http://127.0.0.1:\(server.port + 1)/needs-token")
            default:
                .locationLeavesOrigin(
                    url: url, status: 201, location: "http://127.0.0.2:\(server.port)/resource/other-host/1")
            }
        await #expect(throws: expected) { try await whip.publish(offer: Self.offer) }
        #expect(await whip.session == nil)
        let other = path == "/redirect-other-port" ? "127.0.0.1:\(server.port + 1)" : "127.0.0.2:\(server.port)"
        let verb = path.hasPrefix("/redirect") ? "redirected (307) to" : "answered 201 Created with a Location on"
        #expect(
            expected.description == "WHIP: \(url) \(verb) another origin (http://\(other)); refused: the bearer "
                + "token goes only to http://127.0.0.1:\(server.port), where the endpoint is")
        await whip.stop()
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.host) == ["127.0.0.1"], "only the endpoint's own POST: \(log.map { "\($0.host)\($0.path)" })")
        #expect(log.map(\.path) == [path])
    }

    @Test func aSessionMadeForARefusedAnswerIsDeleted() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/not-sdp")
        await #expect(throws: WHIPError.self) { try await whip.publish(offer: Self.offer) }
        let log = try await server.received(using: HTTPClient(loop: TestLoop.shared))
        #expect(log.map(\.method) == ["POST", "DELETE"])
    }

    @Test func noAnswerWithinTheTimeoutSaysSo() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let whip = try client(server, "/slow", timeout: .seconds(1))
        let url = server.url("/slow")
        await #expect(throws: WHIPError.noAnswer(url: url, after: .seconds(1))) {
            try await whip.publish(offer: Self.offer)
        }
        #expect(
            WHIPError.noAnswer(url: url, after: .seconds(10)).description
                == "WHIP: no answer from \(url) within 10 s — check that the server is up and reachable")
    }

    @Test func aFailedDeleteIsLoggedNotThrown() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let capture = LogCapture()
        let whip = try client(server, "/delete-fails", logger: capture.logger())
        _ = try await whip.publish(offer: Self.offer)
        await whip.stop()
        let warnings = capture.all.filter { $0.level == .warning }.map(\.message)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("answered 500 Internal Server Error: could not delete") == true)
        #expect(await whip.session == nil)
    }

    @Test func badEndpointsAndTokensAreRefusedUpFront() {
        let http = HTTPClient(loop: TestLoop.shared)
        #expect(throws: WHIPError.invalidURL("ftp://example.net/whip")) {
            try WHIPClient(configuration: .init(endpoint: "ftp://example.net/whip"), http: http)
        }
        #expect(throws: WHIPError.invalidToken) {
            try WHIPClient(
                configuration: .init(endpoint: "http://127.0.0.1/whip", bearerToken: "abc\r\nX-Evil: 1"),
                http: http)
        }
    }
}
