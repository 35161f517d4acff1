import CallsClient
import Foundation
import GLibLoop
import ShareCore
import TestSupport
import Testing
@testable import WebRTCTransport
@testable import CallMedia

/// Real libnice agents on 127.0.0.1. Timeouts below only guard against hangs; nothing asserts
/// how long a step took.
@Suite struct ICEAgentTests {
    @Test func trickledCandidatesConnectAndCarryDatagramsBothWays() async throws {
        let loop = GLibLoop(name: "ice-trickle")
        defer { loop.stop() }
        let logs = LogCapture()
        let peers = ICEPeers(loop: loop, logger: logs.logger(label: "ice"))
        try await peers.connect(trickle: true)

        for agent in [peers.a, peers.b] {
            let pair = try #require(agent.selectedPair)
            #expect(pair.localAddress.hasPrefix("127.0.0.1:"))
            #expect(pair.remoteAddress.hasPrefix("127.0.0.1:"))
            // With trickle, a peer's check can arrive before its candidate does: that side then
            // knows the same address as peer-reflexive (RFC 8445 §7.3.1.3), which is still direct.
            #expect(pair.localType == .host && (pair.remoteType == .host || pair.remoteType == .prflx))
            #expect(pair.transport == "udp")
            #expect(!pair.isRelayed)
        }
        #expect(peers.a.selectedPair?.localAddress == peers.b.selectedPair?.remoteAddress)
        #expect(logs.all.contains { $0.metadata["ice.pair"]?.contains("127.0.0.1") == true })

        try await peers.exchangeDatagrams(count: 20, tag: "first")
        let a = peers.a.counters, b = peers.b.counters
        #expect(a.datagramsSent == 20 && b.datagramsSent == 20)
        #expect(a.datagramsReceived == 20 && b.datagramsReceived == 20)
        #expect(a.bytesSent == b.bytesReceived && b.bytesSent == a.bytesReceived)
        #expect(a.bytesSent == (0..<20).map { ICEPeers.payload("a", "first", $0).count }.reduce(0, +))

        await peers.close()
        #expect(peers.a.state == .closed && peers.b.state == .closed)
        #expect(!peers.a.send([1, 2, 3]), "a closed agent refuses to send")
    }

    @Test func sendsFromManyThreadsAndFromTheReceiveHandler() async throws {
        let loop = GLibLoop(name: "ice-threads")
        defer { loop.stop() }
        let peers = ICEPeers(loop: loop, logger: .disabled, echoFromB: true)
        try await peers.connect(trickle: true)
        let a = peers.a
        // Four threads at once (the video, audio and RTCP senders will do this); B echoes each
        // datagram back from inside its receive handler, on the loop thread.
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<50 { #expect(a.send(ICEPeers.payload("a", "thread\(thread)", i))) }
        }
        try await peers.received.until("A gets 200 echoes (got \(peers.receivedByA.count))", within: .seconds(10)) {
            $0.byA.count >= 200
        }
        #expect(a.counters.datagramsSent == 200 && peers.b.counters.datagramsReceived == 200)
        #expect(peers.b.counters.datagramsSent == 200 && a.counters.datagramsReceived == 200)
        for thread in 0..<4 {
            let mine = peers.receivedByA.filter { String(decoding: $0, as: UTF8.self).hasPrefix("a-thread\(thread)-") }
            #expect(
                mine == (0..<50).map { ICEPeers.payload("a", "thread\(thread)", $0) },
                "each thread's datagrams in its order")
        }
        await peers.close()
    }

    @Test func fullyGatheredCandidatesConnectWithoutTrickle() async throws {
        let loop = GLibLoop(name: "ice-vanilla")
        defer { loop.stop() }
        let peers = ICEPeers(loop: loop, logger: .disabled)
        try await peers.connect(trickle: false)
        #expect(peers.a.selectedPair?.localType == .host)
        try await peers.exchangeDatagrams(count: 5, tag: "vanilla")
        await peers.close()
    }

    @Test func restartWhileConnectedGivesNewCredentialsAndReconnects() async throws {
        let loop = GLibLoop(name: "ice-restart")
        defer { loop.stop() }
        let peers = ICEPeers(loop: loop, logger: .disabled)
        try await peers.connect(trickle: true)
        try await peers.exchangeDatagrams(count: 3, tag: "before")
        let oldA = try #require(peers.a.localCredentials), oldB = try #require(peers.b.localCredentials)

        let newA = try await peers.a.restart()
        let newB = try await peers.b.restart()
        #expect(newA != oldA && newB != oldB)
        #expect(newA.ufrag != oldA.ufrag && newA.pwd != oldA.pwd)
        #expect(peers.a.localCredentials == newA)
        #expect(peers.a.state == .gathering, "a restart starts over")
        try await peers.b.setRemoteCredentials(ufrag: newA.ufrag, pwd: newA.pwd)
        try await peers.a.setRemoteCredentials(ufrag: newB.ufrag, pwd: newB.pwd)

        try await peers.waitUntilConnected()
        // The history is read from the state stream, which may trail the agent by a moment.
        try await peers.historyA.seen.until(
            "A's state stream says connected (it says \(peers.history))",
            within: .seconds(10)
        ) { $0.last?.isConnected == true }
        #expect(peers.history.contains(.gathering))
        try await peers.exchangeDatagrams(count: 3, tag: "after")
        await peers.close()
    }

    @Test func consentLostWhenThePeerStopsAnswering() async throws {
        let loopA = GLibLoop(name: "ice-consent-a")
        let loopB = GLibLoop(name: "ice-consent-b")
        defer { loopA.stop(); loopB.stop() }
        let peers = ICEPeers(loop: loopA, loopB: loopB, logger: .disabled)
        try await peers.connect(trickle: true)
        try await peers.exchangeDatagrams(count: 2, tag: "alive")

        // B's loop stops: its sockets stay open but nothing answers A's consent checks.
        loopB.stop()
        // Checks every 4–6 s, the pair lost 50 s after the last answer.
        try await until("A fails (it is \(peers.a.state))", within: .seconds(90)) { peers.a.state.isFailed }
        #expect(peers.a.state == .failed(reason: ICEAgent.consentLostReason))
        #expect(!peers.a.send([0x80, 1]), "no sending without consent")
        await peers.a.close()
    }

    @Test func consentLostWhenThePeerClosesAbruptly() async throws {
        let loop = GLibLoop(name: "ice-consent-close")
        defer { loop.stop() }
        let peers = ICEPeers(loop: loop, logger: .disabled)
        try await peers.connect(trickle: true)
        await peers.b.close()
        try await until("A fails (it is \(peers.a.state))", within: .seconds(90)) { peers.a.state.isFailed }
        #expect(peers.a.state == .failed(reason: ICEAgent.consentLostReason))
        await peers.a.close()
    }

    @Test func unreachableCandidateFailsWithAReason() async throws {
        let loop = GLibLoop(name: "ice-unreachable")
        defer { loop.stop() }
        let agent = ICEAgent(
            loop: loop, configuration: .init(role: .controlling, loopbackOnly: true), logger: .disabled)
        let history = StateHistory(agent)
        try await agent.start()
        let unusedPort = UDPSocket.unusedPort()
        try await agent.setRemoteCredentials(ufrag: "abcd", pwd: "0123456789012345678901")
        try await agent.addRemoteCandidate("candidate:1 1 UDP 2130706431 127.0.0.1 \(unusedPort) typ host")
        try await agent.endOfRemoteCandidates()
        try await until("the agent fails (it is \(agent.state))", within: .seconds(60)) { agent.state.isFailed }
        #expect(
            agent.state
                == .failed(
                    reason:
                        "ICE failed: no candidate pair succeeded (1 local, 1 remote candidate, 1 pair checked) — the peer is unreachable from here; a TURN server may be needed"
                ))
        #expect(history.states.contains(.checking))
        await agent.close()
    }

    @Test func noRemoteCandidatesFailsSayingSo() async throws {
        let loop = GLibLoop(name: "ice-none")
        defer { loop.stop() }
        let configuration = ICEAgent.Configuration(
            role: .controlled, loopbackOnly: true,
            noRemoteCandidatesGrace: .milliseconds(500))
        let agent = ICEAgent(loop: loop, configuration: configuration, logger: .disabled)
        try await agent.start()
        try await agent.setRemoteCredentials(ufrag: "abcd", pwd: "0123456789012345678901")
        try await agent.endOfRemoteCandidates()
        try await until("the agent fails (it is \(agent.state))", within: .seconds(30)) { agent.state.isFailed }
        #expect(
            agent.state
                == .failed(
                    reason:
                        "ICE failed: no remote candidates were received (1 local candidate) — check the peer's network and the signalling"
                ))
        await agent.close()
    }

    @Test func peerWithoutCandidatesIsReachedThroughItsChecks() async throws {
        // B signals end-of-candidates with none (as a peer behind a NAT without STUN might); A has
        // B's candidates and checks it, so B learns A as a peer-reflexive candidate and connects.
        let loop = GLibLoop(name: "ice-prflx")
        defer { loop.stop() }
        let a = ICEAgent(loop: loop, configuration: .init(role: .controlling, loopbackOnly: true), logger: .disabled)
        let b = ICEAgent(loop: loop, configuration: .init(role: .controlled, loopbackOnly: true), logger: .disabled)
        let credentialsA = try await a.start(), credentialsB = try await b.start()
        try await a.setRemoteCredentials(ufrag: credentialsB.ufrag, pwd: credentialsB.pwd)
        try await b.setRemoteCredentials(ufrag: credentialsA.ufrag, pwd: credentialsA.pwd)
        for await event in b.localCandidates {
            guard case .candidate(let line) = event.kind else { break }
            try await a.addRemoteCandidate(line)
        }
        try await a.endOfRemoteCandidates()
        try await b.endOfRemoteCandidates()
        try await until("both connected (A is \(a.state), B is \(b.state))", within: .seconds(15)) {
            a.state.isConnected && b.state.isConnected
        }
        #expect(b.selectedPair?.remoteType == .prflx)
        #expect(a.send([1, 2, 3]))
        await a.close()
        await b.close()
    }

    @Test func localCandidateLinesPassOurOwnChecksIncludingICETCP() async throws {
        let loop = GLibLoop(name: "ice-tcp")
        defer { loop.stop() }
        let agent = ICEAgent(
            loop: loop, configuration: .init(role: .controlling, loopbackOnly: true, iceTCP: true),
            logger: .disabled)
        let credentials = try await agent.start()
        var lines: [String] = []
        for await event in agent.localCandidates {
            #expect(event.ufrag == credentials.ufrag)
            guard case .candidate(let line) = event.kind else { break }
            lines.append(line)
        }
        #expect(lines.allSatisfy { $0.hasPrefix("candidate:") && !$0.hasPrefix("a=") })
        #expect(lines.contains { $0.contains(" UDP ") && $0.contains("127.0.0.1") && $0.hasSuffix("typ host") })
        #expect(
            lines.contains { $0.contains(" TCP ") && $0.contains("tcptype passive") }, "ICE-TCP when asked: \(lines)")
        for line in lines { try await agent.addRemoteCandidate(line) }  // every generated line parses back
        await agent.close()
    }

    @Test func anAgentDroppedWithoutCloseIsReleasedOnTheLoop() async throws {
        let loop = GLibLoop(name: "ice-drop")
        defer { loop.stop() }
        var agent: ICEAgent? = ICEAgent(
            loop: loop, configuration: .init(role: .controlled, loopbackOnly: true),
            logger: .disabled)
        let states = agent!.stateChanges
        try await agent!.start()
        agent = nil
        var last: ICEAgent.State?
        for await state in states { last = state }  // ends once the loop released the agent
        #expect(last == .closed)
        #expect(agent == nil)
    }

    @Test func malformedRemoteCandidateThrowsAClearError() async throws {
        let loop = GLibLoop(name: "ice-malformed")
        defer { loop.stop() }
        let agent = ICEAgent(loop: loop, configuration: .init(role: .controlled, loopbackOnly: true), logger: .disabled)
        try await agent.start()
        do {
            try await agent.addRemoteCandidate("candidate:1 1 UDP 2130706431 abcd.local 5000 typ host")
            Issue.record("an mDNS candidate was accepted")
        } catch {
            #expect(error.description.contains("mDNS"))
        }
        await #expect(throws: ICEError.self) { try await agent.addRemoteCandidate("candidate:garbage") }
        // A well-formed line is still taken afterwards, with or without "a=".
        try await agent.addRemoteCandidate("a=candidate:1 1 UDP 2130706431 127.0.0.1 9 typ host\r\n")
        await agent.close()
        await #expect(throws: ICEError.closed) {
            try await agent.addRemoteCandidate("candidate:1 1 UDP 1 127.0.0.1 9 typ host")
        }
    }

    @Test func callsBeforeStartAndAfterTheLoopStopsAreRefused() async throws {
        let loop = GLibLoop(name: "ice-lifecycle")
        let agent = ICEAgent(
            loop: loop, configuration: .init(role: .controlling, loopbackOnly: true), logger: .disabled)
        #expect(agent.state == .new)
        await #expect(throws: ICEError.notStarted) { try await agent.endOfRemoteCandidates() }
        #expect(!agent.send([1]))
        loop.stop()
        await #expect(throws: ICEError.loopStopped) { try await agent.start() }
        await #expect(throws: ICEError.closed) { try await agent.start() }
        #expect(agent.state == .closed)
    }

    @Test func garbageDatagramsBeforeAndAfterConnectingAreHarmless() async throws {
        let loop = GLibLoop(name: "ice-garbage")
        defer { loop.stop() }
        let peers = ICEPeers(loop: loop, logger: .disabled)
        let socket = try UDPSocket()
        // Before any remote side exists: throw junk at A's host candidate.
        try await peers.a.start()
        let port = try await peers.firstLocalPort(of: "a")
        let junk: [[UInt8]] = [
            [], [0x00], [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42],  // truncated STUN
            [0x16, 0xFE, 0xFD], [0x80, 0x60] + [UInt8](repeating: 0xEE, count: 1200),
            (0..<255).map { UInt8($0) }
        ]
        for datagram in junk { socket.send(datagram, toPort: port) }
        try await peers.connect(trickle: true)
        for datagram in junk { socket.send(datagram, toPort: port) }
        try await peers.exchangeDatagrams(count: 10, tag: "through-junk")
        #expect(peers.a.state.isConnected)
        // libnice 0.1.21 hands the application only datagrams from a validated remote candidate:
        // the junk (from a port no candidate names) is dropped before the handler, and not counted.
        #expect(peers.receivedByA.allSatisfy(ICEPeers.isPayload))
        #expect(peers.a.counters.datagramsReceived == 10)
        await peers.close()
    }
}

// MARK: - Harness

/// Every state an agent went through, read from its stream.
final class StateHistory: Sendable {
    let seen = Watched<[ICEAgent.State]>([])
    init(_ agent: ICEAgent) {
        Task { [seen] in for await state in agent.stateChanges { seen.change { $0.append(state) } } }
    }
    var states: [ICEAgent.State] { seen.value }
}

/// Two agents (A controlling, B controlled) on loopback, with the signalling done in code:
/// credentials exchanged directly, candidates forwarded as they are trickled.
final class ICEPeers: Sendable {
    let a: ICEAgent
    let b: ICEAgent
    /// The datagrams each side received, in order.
    struct Received: Sendable {
        var byA: [[UInt8]] = []
        var byB: [[UInt8]] = []
    }
    let received = Watched(Received())
    let historyA: StateHistory
    private let gathered = Locked<[String: [ICEAgent.LocalCandidateEvent]]>([:])

    init(
        loop: GLibLoop, loopB: GLibLoop? = nil, logger: Logger, echoFromB: Bool = false,
        configurationA: ICEAgent.Configuration = .init(role: .controlling, loopbackOnly: true)
    ) {
        a = ICEAgent(loop: loop, configuration: configurationA, logger: logger.child("a"))
        b = ICEAgent(
            loop: loopB ?? loop, configuration: .init(role: .controlled, loopbackOnly: true), logger: logger.child("b"))
        historyA = StateHistory(a)
        let received = self.received
        try! a.setReceiveHandler { buffer in received.change { $0.byA.append(Array(buffer)) } }
        let echo = LoopBoundEcho()
        try! b.setReceiveHandler { buffer in
            received.change { $0.byB.append(Array(buffer)) }
            if echoFromB { echo.agent?.send(buffer) }
        }
        echo.agent = b
    }

    var history: [ICEAgent.State] { historyA.states }
    var receivedByA: [[UInt8]] { received.value.byA }
    var receivedByB: [[UInt8]] { received.value.byB }

    static func payload(_ from: String, _ tag: String, _ index: Int) -> [UInt8] {
        Array("\(from)-\(tag)-\(index)".utf8)
    }

    static func isPayload(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.hasPrefix("a-") || text.hasPrefix("b-")
    }

    /// Starts both (A may already be started), exchanges credentials and candidates, waits for both connected.
    func connect(trickle: Bool) async throws {
        if a.state == .new { try await a.start() }
        if b.state == .new { try await b.start() }
        let credentialsA = try #require(a.localCredentials), credentialsB = try #require(b.localCredentials)
        if trickle {
            forward(from: a, to: b, replaying: gathered.withLock { $0.removeValue(forKey: "a") } ?? [])
            forward(from: b, to: a, replaying: [])
            try await b.setRemoteCredentials(ufrag: credentialsA.ufrag, pwd: credentialsA.pwd)
            try await a.setRemoteCredentials(ufrag: credentialsB.ufrag, pwd: credentialsB.pwd)
        } else {
            // Vanilla ICE: everything gathered first, then handed over in one go.
            let fromA = await Self.gatherAll(a), fromB = await Self.gatherAll(b)
            #expect(!fromA.isEmpty && !fromB.isEmpty)
            try await b.setRemoteCredentials(ufrag: credentialsA.ufrag, pwd: credentialsA.pwd)
            try await a.setRemoteCredentials(ufrag: credentialsB.ufrag, pwd: credentialsB.pwd)
            for line in fromA { try await b.addRemoteCandidate(line) }
            for line in fromB { try await a.addRemoteCandidate(line) }
            try await a.endOfRemoteCandidates()
            try await b.endOfRemoteCandidates()
        }
        try await waitUntilConnected()
    }

    /// Loopback checks connect in well under a second; the bound only guards against a hang, and is
    /// wide because the CPU-bound encoder tests beside these can starve the loop threads for a while.
    func waitUntilConnected() async throws {
        try await until("both connected (A is \(a.state), B is \(b.state))", within: .seconds(60)) {
            self.a.state.isConnected && self.b.state.isConnected
        }
    }

    private static func gatherAll(_ agent: ICEAgent) async -> [String] {
        var lines: [String] = []
        for await event in agent.localCandidates {
            switch event.kind {
            case .candidate(let line): lines.append(line)
            case .endOfCandidates: return lines
            }
        }
        return lines
    }

    /// Forwards `from`'s trickled candidates to `to` in order, each once `to` knows the ufrag it
    /// belongs to (as signalling orders a restart's offer before its candidates); stale ones are dropped.
    private func forward(from: ICEAgent, to: ICEAgent, replaying earlier: [ICEAgent.LocalCandidateEvent]) {
        Task {
            func deliver(_ event: ICEAgent.LocalCandidateEvent) async {
                guard event.ufrag == from.localCredentials?.ufrag else { return }
                try? await until("the other agent knows the candidate's ufrag", within: .seconds(15)) {
                    to.remoteCredentials?.ufrag == event.ufrag || to.state == .closed
                }
                switch event.kind {
                case .candidate(let line): try? await to.addRemoteCandidate(line)
                case .endOfCandidates: try? await to.endOfRemoteCandidates()
                }
            }
            for event in earlier { await deliver(event) }
            for await event in from.localCandidates { await deliver(event) }
        }
    }

    /// The port of A's first host candidate (read from its trickle).
    func firstLocalPort(of name: String) async throws -> UInt16 {
        precondition(name == "a")
        var port: UInt16?
        var kept: [ICEAgent.LocalCandidateEvent] = []
        for await event in a.localCandidates {
            kept.append(event)
            if case .candidate(let line) = event.kind {
                port = UInt16(line.split(separator: " ")[5])
                break
            }
        }
        gathered.withLock { $0["a"] = kept }
        return try #require(port)
    }

    /// Sends `count` datagrams each way and waits until all arrived; checks content and order.
    func exchangeDatagrams(count: Int, tag: String) async throws {
        for i in 0..<count {
            #expect(a.send(Self.payload("a", tag, i)))
            #expect(b.send(Self.payload("b", tag, i)))
        }
        let tagged = { @Sendable (list: [[UInt8]], from: String) in
            list.filter { String(decoding: $0, as: UTF8.self).hasPrefix("\(from)-\(tag)-") }
        }
        try await received.until(
            "\(count) datagrams arrive each way (B got \(tagged(receivedByB, "a").count), "
                + "A got \(tagged(receivedByA, "b").count))", within: .seconds(10)
        ) {
            tagged($0.byB, "a").count >= count && tagged($0.byA, "b").count >= count
        }
        #expect(tagged(receivedByB, "a") == (0..<count).map { Self.payload("a", tag, $0) })
        #expect(tagged(receivedByA, "b") == (0..<count).map { Self.payload("b", tag, $0) })
    }

    func close() async {
        await a.close()
        await b.close()
    }
}

/// Lets B's receive handler reach B without a retain cycle.
final class LoopBoundEcho: @unchecked Sendable {
    // Written once before B starts, read afterwards on B's loop thread only.
    weak var agent: ICEAgent?
}

/// A plain UDP socket on 127.0.0.1, for junk datagrams and unused ports.
final class UDPSocket: Sendable {
    let fd: Int32

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0)
    }

    deinit { Glibc.close(fd) }

    var port: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    func send(_ bytes: [UInt8], toPort port: UInt16) {
        var address = Self.loopback(port: port)
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// A port that was free a moment ago and now has nothing listening.
    static func unusedPort() -> UInt16 {
        let socket = try! UDPSocket()
        return socket.port
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
