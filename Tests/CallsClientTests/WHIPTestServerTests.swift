import CallsClient
import Foundation
import GLibLoop
import ShareCore
import TestSupport
import Testing
@testable import Signalling

/// The one GLib loop these tests share (as the process it stands for would). Never stopped: a
/// client released after its loop stopped could not free its session on the right thread.
enum TestLoop {
    static let shared = GLibLoop(name: "calls-client-tests")
}

/// `scripts/whip-test-server.py` on 127.0.0.1 with a free port: a WHIP endpoint that misbehaves on
/// request and records what it received. One per test; it exits when `stop()` closes its stdin,
/// or when this test process dies.
final class WHIPTestServer {
    let port: Int
    private let process: Process
    private let input: Pipe

    var base: String { "http://127.0.0.1:\(port)" }
    func url(_ path: String) -> String { base + path }

    private init(port: Int, process: Process, input: Pipe) {
        self.port = port
        self.process = process
        self.input = input
    }

    deinit { stop() }

    static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/whip-test-server.py").path
    }

    static func start() async throws -> WHIPTestServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Read the "PORT n" line through a readability handler (a Dispatch source): no thread
        // waits on the pipe, so many servers can start at once without starving the thread pools.
        let line: String = await withCheckedContinuation { continuation in
            let collected = Locked<(bytes: [UInt8], done: Bool)>(([], false))
            output.fileHandleForReading.readabilityHandler = { handle in
                let chunk = handle.availableData
                let finished: String? = collected.withLock { state in
                    guard !state.done else { return nil }
                    state.bytes += chunk
                    guard chunk.isEmpty || state.bytes.contains(0x0A) else { return nil }
                    state.done = true
                    return String(decoding: state.bytes, as: UTF8.self)
                }
                if let finished {
                    handle.readabilityHandler = nil
                    continuation.resume(returning: finished)
                }
            }
        }
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            throw ServerDidNotStart(output: line)
        }
        return WHIPTestServer(port: port, process: process, input: input)
    }

    struct ServerDidNotStart: Error, CustomStringConvertible {
        let output: String
        var description: String { "whip-test-server.py did not start (it printed \"\(output)\")" }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
    }

    /// Everything the server received so far (its /_log), in order.
    func received(using http: HTTPClient) async throws -> [ReceivedRequest] {
        let response = try await http.send(HTTPRequest(method: "GET", url: url("/_log")))
        return try JSONDecoder().decode([ReceivedRequest].self, from: Data(response.body))
    }
}

extension WHIPTestServer {
    /// Polls the server's log until `condition` holds; fails after 30 s (a guard, not a timing: a
    /// full parallel test run on a busy 2-core machine was seen to need more than 10).
    func waitFor(using http: HTTPClient, _ condition: ([ReceivedRequest]) -> Bool) async throws {
        var log: [ReceivedRequest] = []
        try await until(
            "the server's log becomes what the test waits for (it holds \(log.map(\.path)))",
            within: .seconds(30), every: .milliseconds(20)
        ) {
            log = try await received(using: http)
            return condition(log)
        }
    }
}

/// One request as the test server recorded it.
struct ReceivedRequest: Decodable, Sendable {
    /// The address it arrived on: 127.0.0.1, or 127.0.0.2 (the same server as another origin).
    let host: String
    let method: String
    let path: String
    let headers: [[String]]
    let body: String

    /// A header's value, name in any case (the server keeps the case it was sent in).
    func header(_ name: String) -> String? {
        headers.first { $0.first?.lowercased() == name.lowercased() }.flatMap { $0.count > 1 ? $0[1] : nil }
    }
}

@Suite struct WHIPTestServerTests {
    @Test func serverStartsOnAFreePortAndRecordsRequests() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        #expect(server.port > 0)
        let http = HTTPClient(loop: TestLoop.shared)
        let response = try await http.send(
            HTTPRequest(
                method: "POST", url: server.url("/error-400"),
                headers: ["Content-Type": "application/sdp", "X-Probe": "1"],
                body: Array("v=0\r\n".utf8)))
        #expect(response.status == 400)
        let log = try await server.received(using: http)
        #expect(log.count == 1)
        #expect(log.first?.method == "POST")
        #expect(log.first?.path == "/error-400")
        #expect(log.first?.header("x-probe") == "1")
        #expect(log.first?.body == "v=0\r\n")
    }
}
