import CallsClient
import Foundation
import GLibLoop
import Testing
@testable import Signalling

/// The libsoup client against a real HTTP server (scripts/whip-test-server.py) on 127.0.0.1.
@Suite struct HTTPClientTests {
    let offer = Array("v=0\r\n".utf8)

    @Test func postReturnsStatusHeadersAndBody() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared)
        let response = try await http.send(
            HTTPRequest(
                method: "POST", url: server.url("/ok"), headers: ["Content-Type": "application/sdp"], body: offer))
        #expect(response.status == 201)
        #expect(response.reason == "Created")
        #expect(response.headers["content-type"] == "application/sdp")
        #expect(response.headers["CONTENT-TYPE"] == "application/sdp")
        #expect(response.headers["etag"] == "\"ok-1\"")
        #expect(response.text.hasPrefix("v=0\r\n"))
        #expect(response.url == server.url("/ok"))
        let log = try await server.received(using: http)
        #expect(log.first?.header("Content-Type") == "application/sdp")
        #expect(log.first?.header("User-Agent") == "sharectl")
    }

    @Test func repeatedHeadersStaySeparateAndInOrder() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared)
        let response = try await http.send(HTTPRequest(method: "POST", url: server.url("/ice-servers"), body: offer))
        let links = response.headers.values("link")
        #expect(links.count == 3)
        #expect(links.first == "<stun:stun.example.net>; rel=\"ice-server\"")
        #expect(links.last?.contains("<stun:[::1]:3479>") == true)
    }

    @Test func redirectsAreReturnedNotFollowed() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared)
        let response = try await http.send(HTTPRequest(method: "POST", url: server.url("/redirect-307"), body: offer))
        #expect(response.status == 307)
        #expect(response.headers["Location"] == "/needs-token")
        let log = try await server.received(using: http)
        #expect(log.map(\.path) == ["/redirect-307"], "libsoup must not follow the redirect itself")
    }

    @Test func noAnswerTimesOutWithAClearError() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared)
        let url = server.url("/slow")
        await #expect(throws: HTTPError.timedOut(url: url, after: .seconds(1))) {
            try await http.send(HTTPRequest(method: "POST", url: url, body: offer), timeout: .seconds(1))
        }
        #expect(
            HTTPError.timedOut(url: url, after: .seconds(1)).description == "http: no answer from \(url) within 1 s")
        // The loop was not held up: the next request on the same client works.
        let next = try await http.send(HTTPRequest(method: "POST", url: server.url("/ok"), body: offer))
        #expect(next.status == 201)
    }

    @Test func oversizedBodyWithContentLengthIsRefused() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared)
        let url = server.url("/huge-body")
        await #expect(throws: HTTPError.bodyTooLarge(url: url, limit: 1 << 20)) {
            try await http.send(HTTPRequest(method: "POST", url: url, body: offer))
        }
    }

    @Test func endlessBodyIsCutOffAtTheLimitAndTheLoopStaysFree() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared, maxBodyBytes: 64 * 1024)
        let url = server.url("/endless-body")
        await #expect(throws: HTTPError.bodyTooLarge(url: url, limit: 64 * 1024)) {
            try await http.send(HTTPRequest(method: "POST", url: url, body: offer))
        }
        let next = try await http.send(HTTPRequest(method: "POST", url: server.url("/ok"), body: offer))
        #expect(next.status == 201)
    }

    @Test func refusedConnectionIsATransportError() async throws {
        // Start a server to learn a free port, then stop it: nothing listens there any more.
        let server = try await WHIPTestServer.start()
        let url = server.url("/ok")
        server.stop()
        let http = HTTPClient(loop: TestLoop.shared)
        var refused = false
        for _ in 0..<50 where !refused {  // the server takes a moment to exit
            do {
                _ = try await http.send(HTTPRequest(method: "POST", url: url, body: offer))
                try await Task.sleep(for: .milliseconds(100))
            } catch let error as HTTPError {
                guard case .transport(let failed, let reason) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(failed == url)
                #expect(!reason.isEmpty)
                #expect(error.description.hasPrefix("http: could not reach \(url): "))
                refused = true
            }
        }
        #expect(refused)
    }

    @Test func invalidURLsAreRefusedBeforeAnythingIsSent() async throws {
        let http = HTTPClient(loop: TestLoop.shared)
        for url in ["ftp://127.0.0.1/x", "not a url", "http//missing-colon", "file:///etc/passwd"] {
            await #expect(throws: HTTPError.invalidURL(url)) {
                try await http.send(HTTPRequest(method: "GET", url: url))
            }
        }
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let http = HTTPClient(loop: TestLoop.shared)
        let url = server.url("/slow")
        let request = HTTPRequest(method: "POST", url: url, body: offer)
        let task = Task { try await http.send(request, timeout: .seconds(30)) }
        try await server.waitFor(using: http) { $0.contains { $0.path == "/slow" } }
        task.cancel()
        await #expect(throws: HTTPError.cancelled(url: url)) { try await task.value }
    }

    /// Regression: a client freed while libsoup still winds a cancelled request down must keep
    /// that request's state alive until libsoup calls back (it once crashed here).
    @Test func aClientFreedWhileARequestWindsDownIsSafe() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let observer = HTTPClient(loop: TestLoop.shared)
        for round in 1...3 {
            var http: HTTPClient? = HTTPClient(loop: TestLoop.shared)
            let request = HTTPRequest(method: "POST", url: server.url("/slow"), body: offer)
            let task = Task { [http] in try await http!.send(request, timeout: .seconds(30)) }
            try await server.waitFor(using: observer) { $0.filter { $0.path == "/slow" }.count == round }
            task.cancel()
            _ = try? await task.value
            http = nil
            _ = http
        }
        let next = try await observer.send(HTTPRequest(method: "POST", url: server.url("/ok"), body: offer))
        #expect(next.status == 201)
    }

    @Test func requestsAfterTheLoopStoppedFailInsteadOfHanging() async throws {
        let loop = GLibLoop(name: "stopped-loop-test")
        // Let the loop run one piece of work first: GLibLoop's init can return before
        // g_main_loop_run has begun, and a stop() in that window is lost (the join then hangs).
        await withCheckedContinuation { continuation in loop.invoke { continuation.resume() } }
        loop.stop()
        let http = HTTPClient(loop: loop)
        await #expect(throws: HTTPError.loopStopped) {
            try await http.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:9/"))
        }
    }

    @Test func firstBodyLineIsShortAndHarmless() {
        let escape = HTTPResponse(
            status: 500, body: Array("\n\n  \u{1B}[31mred\u{07} alert\r\nmore".utf8), url: "http://x/")
        #expect(escape.firstBodyLine == "?[31mred? alert")
        let long = HTTPResponse(status: 500, body: Array(String(repeating: "a", count: 300).utf8), url: "http://x/")
        #expect(long.firstBodyLine == String(repeating: "a", count: 200) + "…")
        #expect(HTTPResponse(status: 500, body: Array(" \r\n ".utf8), url: "http://x/").firstBodyLine == nil)
    }

    @Test func headersLookUpWithoutCaseAndKeepOrder() {
        var headers: HTTPHeaders = ["Link": "<a>", "content-type": "text/plain"]
        headers.add("LINK", "<b>")
        #expect(headers["CONTENT-type"] == "text/plain")
        #expect(headers.values("link") == ["<a>", "<b>"])
        headers.set("Link", "<c>")
        #expect(headers.values("lInK") == ["<c>"])
        headers.set("content-TYPE", nil)
        #expect(!headers.contains("Content-Type"))
    }
}
