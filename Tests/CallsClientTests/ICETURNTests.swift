import CallsClient
import Foundation
import GLibLoop
import ShareCore
import TestSupport
import Testing
@testable import CallMedia
@testable import Signalling
@testable import WebRTCTransport

/// Relay candidates through a real TURN server: Debian's coturn (`turnserver`) on 127.0.0.1 with a
/// static long-term user. Skipped where coturn is not installed (`apt-get install coturn`).
@Suite struct ICETURNTests {
    @Test(
        .enabled(if: TURNServerProcess.isInstalled, "coturn's turnserver is not installed"),
        arguments: [ICEAgent.TURNServer.Transport.udp, .tcp])
    func relayOnlyAgentConnectsThroughTURN(transport: ICEAgent.TURNServer.Transport) async throws {
        // Its start polls the listener for up to 10 s: on a thread of its own, not the pool's.
        let turn = try await onPlainThread { try TURNServerProcess() }
        defer { turn.stop() }
        let loop = GLibLoop(name: "ice-turn-\(transport.rawValue)")
        defer { loop.stop() }
        let server = try ICEAgent.TURNServer(
            url: "turn:127.0.0.1:\(turn.port)?transport=\(transport.rawValue)",
            username: TURNServerProcess.username, credential: TURNServerProcess.password)
        let relayed = ICEAgent.Configuration(
            role: .controlling, turnServers: [server], loopbackOnly: true, relayOnly: true)
        let peers = ICEPeers(loop: loop, logger: .disabled, configurationA: relayed)
        try await peers.connect(trickle: true)

        let pair = try #require(peers.a.selectedPair)
        #expect(pair.localType == .relay, "A's side of the pair is its TURN allocation: \(pair)")
        #expect(pair.isRelayed)
        #expect(pair.transport == "udp", "the relayed leg is UDP whichever transport reaches the server")
        let relayPort = try #require(UInt16(pair.localAddress.split(separator: ":").last ?? ""))
        #expect(TURNServerProcess.relayPorts.contains(relayPort))
        #expect(peers.b.selectedPair?.remoteAddress == pair.localAddress, "B sends to A's relayed address")
        try await peers.exchangeDatagrams(count: 10, tag: "relayed-\(transport.rawValue)")
        await peers.close()
    }

    @Test func turnOverTLSIsSkippedWithAWarning() async throws {
        let loop = GLibLoop(name: "ice-turns")
        defer { loop.stop() }
        let logs = LogCapture()
        let server = try ICEAgent.TURNServer(url: "turns:127.0.0.1:5349", username: "u", credential: "p")
        let agent = ICEAgent(
            loop: loop, configuration: .init(role: .controlling, turnServers: [server], loopbackOnly: true),
            logger: logs.logger())
        try await agent.start()
        #expect(logs.all.contains { $0.level == .warning && $0.message.contains("cannot speak TLS to a TURN server") })
        await agent.close()
    }
}

/// A coturn `turnserver` on 127.0.0.1 for one test: UDP and TCP on one free port, relays from a
/// fixed range on 127.0.0.1, loopback peers allowed (it refuses them by default).
final class TURNServerProcess: Sendable {
    static let username = "sharectl"
    static let password = "relay-secret"
    static let relayPorts: ClosedRange<UInt16> = 49160...49400
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver") }

    let port: UInt16
    private let process: Process
    private let directory: URL

    init() throws {
        port = UDPSocket.unusedPort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sharectl-turn-\(port)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/turnserver")
        process.arguments = [
            "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
            "--min-port=\(Self.relayPorts.lowerBound)", "--max-port=\(Self.relayPorts.upperBound)",
            "--lt-cred-mech", "--user=\(Self.username):\(Self.password)", "--realm=sharectl.test",
            "--allow-loopback-peers", "--no-cli", "--no-tls", "--no-dtls", "--no-stdout-log",
            "--log-file=\(directory.appendingPathComponent("turn.log").path)",
            "--pidfile=\(directory.appendingPathComponent("turn.pid").path)",
            "--userdb=\(directory.appendingPathComponent("turndb").path)"
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready once its TCP listener accepts (it opens UDP at the same time); a hang guard of 10 s.
        let deadline = Date().addingTimeInterval(10)
        while !Self.acceptsTCP(port: port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw TURNServerError.didNotStart
            }
            usleep(20_000)
        }
    }

    func stop() {
        if process.isRunning {
            // coturn takes its time over SIGTERM (it lets sessions wind down); a test server need not.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private static func acceptsTCP(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }

    enum TURNServerError: Error { case didNotStart }
}
