@testable import CallsServer
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import ShareCore
import TestSupport
import Testing
@testable import RoomProtocol

/// What the server does with clients that are not polite, on real sockets: bodies refused before
/// they are read, slow readers and silent peers closed, caps, origins, logs, the state file.
@Suite(.serialized) struct RoomServerHardeningTests {
    func get(_ url: String) async throws -> (Int, HTTPURLResponse?) {
        let (_, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, response as? HTTPURLResponse)
    }

    /// Opens a WebSocket and joins as `name`; returns the socket once welcomed.
    func joined(_ running: TestRoomServer, _ name: String, receiveBuffer: Int? = nil) async throws -> RawSocket {
        try await onPlainThread {
            let socket = try RawSocket(port: running.port, receiveBuffer: receiveBuffer)
            guard socket.upgrade(running.socketPath)?.hasPrefix("HTTP/1.1 101") == true else {
                throw RawSocketError(description: "no upgrade")
            }
            socket.sendText(#"{"type":"join","name":"\#(name)"}"#)
            guard socket.readText()?.contains("welcome") == true else {
                throw RawSocketError(description: "no welcome")
            }
            return socket
        }
    }

    // MARK: 1. Request bodies

    @Test func anEndlessPostIsRefusedBeforeItsBodyIsRead() async throws {
        let running = try await TestRoomServer.start()
        let (sent, head) = try await onPlainThread { () -> (Int, String?) in
            let socket = try RawSocket(port: running.port)
            socket.send("POST /r/h HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x41, count: 0x10000) + Array("\r\n".utf8)
            var sent = 0
            while sent < 200 * 1024 * 1024, socket.send(chunk) { sent += 0x10000 }
            return (sent, socket.readHead())
        }
        // A server that never reads the body closes the connection once it has answered: the
        // client's sends stop when the kernel's socket buffers are full (a few MB on loopback,
        // however loaded the machine). A server that read the body would take all 200 MB. (The
        // test process's own memory says nothing: the tests beside this one grow it by hundreds
        // of MB on a busy run.)
        #expect(
            sent < 32 * 1024 * 1024,
            "the server went on taking a body it refuses: \(sent / 1024 / 1024) MB of 200 sent before it closed")
        if let head {
            #expect(head.hasPrefix("HTTP/1.1 405"))
            #expect(head.lowercased().contains("connection: close"))
        }
        #expect(try await get(running.invite).0 == 200)
        await running.stop()
    }

    @Test func aBodyOnAGetIsRefusedFromItsHeaders() async throws {
        let running = try await TestRoomServer.start()
        let head = try await onPlainThread { () -> String? in
            let socket = try RawSocket(port: running.port, timeoutSeconds: 3)
            socket.send("GET /r/h HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\nContent-Length: 100000000\r\n\r\n")
            return socket.readHead()
        }
        #expect(head?.hasPrefix("HTTP/1.1 413") == true, "answer: \(head ?? "none")")
        #expect(head?.lowercased().contains("connection: close") == true)
        #expect(head?.lowercased().contains("referrer-policy: no-referrer") == true)
        await running.stop()
    }

    // MARK: 2. Per-socket output, caps, pongs

    @Test func aParticipantThatStopsReadingIsClosed() async throws {
        var limits = RoomLimits.underTest
        limits.maxSocketOutputBytes = 1024 * 1024
        let running = try await TestRoomServer.start(limits: limits)
        let reader = try await joined(running, "Slow", receiveBuffer: 16 * 1024)  // p1, never reads again
        let sender = try await joined(running, "Fast")
        let offer = #"{"type":"signal","to":"p1","kind":"offer","sdp":"\#(String(repeating: "v", count: 200_000))"}"#
        try await onPlainThread { for _ in 0..<150 { sender.sendText(offer) } }
        var present = ["p1"]
        try? await until("the server closes p1", within: .seconds(10)) {  // the expectation below judges
            present = await running.server.presentIDs(inRoom: running.room)
            return !present.contains("p1")
        }
        #expect(!present.contains("p1"), "a peer that reads nothing is still connected, its output buffered")
        _ = reader
        await running.stop()
    }

    @Test func aPeerThatNeverAnswersPingsIsClosed() async throws {
        var limits = RoomLimits.underTest
        limits.keepaliveInterval = .seconds(1)
        limits.pongTimeout = .seconds(2)
        let running = try await TestRoomServer.start(limits: limits)
        let silent = try await joined(running, "Silent")
        let started = ContinuousClock.now
        let ended = try await onPlainThread { () -> Bool in
            // Reads everything, answers nothing, until the server closes (or 12 s pass).
            while ContinuousClock.now - started < .seconds(12) {
                guard let frame = silent.readFrame() else { return !silent.timedOut }
                if frame.opcode == 8 { return true }
            }
            return false
        }
        #expect(ended, "a peer that answers no ping was kept")
        #expect(ContinuousClock.now - started < .seconds(10))
        await running.stop()
    }

    @Test func socketsFromOneAddressAreCapped() async throws {
        var limits = RoomLimits.underTest
        limits.maxSocketsPerAddress = 2
        let running = try await TestRoomServer.start(limits: limits)
        let heads = try await onPlainThread { () -> [String] in
            let sockets = try (0..<3).map { _ in try RawSocket(port: running.port) }
            let heads = sockets.map { $0.upgrade(running.socketPath) ?? "none" }
            return heads
        }
        #expect(heads[0].hasPrefix("HTTP/1.1 101"))
        #expect(heads[1].hasPrefix("HTTP/1.1 101"))
        #expect(heads[2].hasPrefix("HTTP/1.1 429"), "third: \(heads[2])")
        await running.stop()
    }

    @Test func roomsAreCapped() async throws {
        var limits = RoomLimits.underTest
        limits.maxRooms = 2
        let running = try await TestRoomServer.start(limits: limits)
        _ = try await running.server.addRoom(named: "second")
        await #expect(throws: RoomServerError.self) { try await running.server.addRoom(named: "third") }
        await running.stop()
    }

    // MARK: 5. The state file

    @Test func aBurstOfChangesIsWrittenOnceASecond() async throws {
        let path = NSTemporaryDirectory() + "room-burst-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let running = try await TestRoomServer.start(stateFile: path)
        let before = await running.server.stateFileWrites()
        let ana = try await joined(running, "Ana")
        _ = try await onPlainThread {
            ana.sendText(#"{"type":"share","on":true,"mid":"0"}"#)
            ana.sendText(#"{"type":"share","on":false}"#)
        }
        let bo = try await joined(running, "Bo")
        _ = try await onPlainThread { bo.sendText(#"{"type":"leave"}"#) }
        try await Task.sleep(for: .milliseconds(300))
        let inBurst = await running.server.stateFileWrites() - before
        #expect(inBurst <= 1, "\(inBurst) writes for one burst of changes")
        try await Task.sleep(for: .milliseconds(2500))
        #expect(await running.server.stateFileWrites() - before <= 2)
        let saved = try JSONDecoder().decode(RoomSnapshot.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(saved.participants.map(\.name) == ["Ana"], "the last change is on disk")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        await running.stop()
    }

    @Test func aSymlinkAtTheStatePathIsRefused() async throws {
        let directory = NSTemporaryDirectory() + "room-link-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let target = directory + "/elsewhere", link = directory + "/state.json"
        #expect(symlink(target, link) == 0)
        let running = try await TestRoomServer.start()
        await #expect(throws: RoomServerError.self) {
            try await running.server.addRoom(named: "linked", stateFile: link)
        }
        #expect(!FileManager.default.fileExists(atPath: target), "the write followed the link")
        var status = stat()
        #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link was replaced")
        await running.stop()
    }

    // MARK: 6. Browsers

    @Test func aWebSocketFromAnotherOriginIsRefused() async throws {
        let running = try await TestRoomServer.start(allowedOrigins: ["https://allowed.example"])
        let heads = try await onPlainThread { () -> [String] in
            [nil, "http://127.0.0.1:\(running.port)", "https://allowed.example", "http://evil.example", "null"].map {
                origin in
                (try? RawSocket(port: running.port))?.upgrade(running.socketPath, origin: origin) ?? "none"
            }
        }
        #expect(heads[0].hasPrefix("HTTP/1.1 101"), "no Origin: \(heads[0])")
        #expect(heads[1].hasPrefix("HTTP/1.1 101"), "same origin: \(heads[1])")
        #expect(heads[2].hasPrefix("HTTP/1.1 101"), "allowed origin: \(heads[2])")
        #expect(heads[3].hasPrefix("HTTP/1.1 403"), "other origin: \(heads[3])")
        #expect(heads[4].hasPrefix("HTTP/1.1 403"), "opaque origin: \(heads[4])")
        await running.stop()
    }

    @Test func everyResponseCarriesTheBrowserPolicies() async throws {
        let running = try await TestRoomServer.start()
        for url in [
            running.invite, running.base + "/elsewhere", running.base + "/r/\(running.room)?t=wrong",
            running.base + "/client/room.js"
        ] {
            let (_, response) = try await get(url)
            let policy = response?.value(forHTTPHeaderField: "Content-Security-Policy") ?? ""
            #expect(response?.value(forHTTPHeaderField: "Referrer-Policy") == "no-referrer", "\(url)")
            #expect(policy.contains("frame-ancestors 'none'"), "\(url): \(policy)")
            #expect(policy.contains("connect-src 'self' ws://127.0.0.1:\(running.port);"), "\(url): \(policy)")
            #expect(!policy.contains(" ws: ") && !policy.contains(" wss:;"), "\(url): \(policy)")
        }
        await running.stop()
    }

    // MARK: 7. Logs

    @Test func networkStringsReachTheLogEscaped() async throws {
        let capture = LogCapture()
        let running = try await TestRoomServer.start(logger: capture.logger())
        _ = try await onPlainThread {
            let socket = try RawSocket(port: running.port)
            socket.send("GET /r/%1B%5B2J%0D%0Aforged%E2%80%AE?t=x HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\n\r\n")
            return socket.readHead()
        }
        let said = capture.messages.joined(separator: "|")
        #expect(said.contains("refused"))
        #expect(
            !said.contains("\u{1B}") && !said.contains("\r") && !said.contains("\n") && !said.contains("\u{202E}"),
            "\(said.debugDescription)")
        await running.stop()
    }

    // MARK: 8. SIGPIPE

    /// The sharectl binary of this build.
    var sharectl: String { BuiltProducts.sharectl }

    @Test func aWriteToAClosedPipeDoesNotKill() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: sharectl), "build sharectl first: \(sharectl)")
        // `sharectl help | true`, the reader gone before the first write. The test runner ignores
        // SIGPIPE and a child would inherit that: env gives bash, and so sharectl, the default.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "--default-signal=PIPE", "bash", "-c", #"{ sleep 0.3; exec "$0" help; } | true; echo ${PIPESTATUS[0]}"#,
            sharectl
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let said = try await onPlainThread { () -> String in
            let data = try output.fileHandleForReading.readToEnd() ?? Data()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(
            said.trimmingCharacters(in: .whitespacesAndNewlines) == "0",
            "sharectl ended with status \(said) (141: SIGPIPE)")
    }

    @Test func serveOutlivesAReaderThatWentAway() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: sharectl), "build sharectl first: \(sharectl)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal=PIPE", sharectl, "serve", "--listen", "127.0.0.1:0", "--room", "pipe"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let first = try await onPlainThread { () -> String in
            var line: [UInt8] = []
            while line.last != 10, let byte = try output.fileHandleForReading.read(upToCount: 1) { line += byte }
            return String(decoding: line, as: UTF8.self)
        }
        #expect(first.hasPrefix("Room: "))
        try output.fileHandleForReading.close()  // like `| head -1`
        // What it says while stopping goes to a pipe nobody reads. SIGINT is asked again every
        // half second: one sent before the server's signal source is registered is lost (the
        // source is set up asynchronously), and a test must end rather than wait for ever.
        let exited = try await onPlainThread { () -> Bool in
            for _ in 0..<40 where process.isRunning {
                kill(process.processIdentifier, SIGINT)
                usleep(500_000)
            }
            return !process.isRunning
        }
        guard exited else {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("sharectl serve did not stop within 20 s of SIGINT")
            return
        }
        try await onPlainThread { process.waitUntilExit() }
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 0)
    }
}
