@testable import CallsClient
import Testing
@testable import CallMedia
@testable import Signalling
@testable import WebRTCTransport

/// The ICE layer's pure parts: candidate-line checks, STUN/TURN URLs, failure wording, address choice.
@Suite struct ICEParsingTests {
    @Test(arguments: [
        (
            "candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ host",
            "candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ host"
        ),
        (
            "a=candidate:1 1 udp 2013266431 127.0.0.1 40000 typ host\r\n",
            "candidate:1 1 udp 2013266431 127.0.0.1 40000 typ host"
        ),
        (
            "candidate:842163049 1 udp 1677729535 203.0.113.7 61665 typ srflx raddr 10.0.0.2 rport 61665 generation 0 ufrag EsAw network-cost 999",
            "candidate:842163049 1 udp 1677729535 203.0.113.7 61665 typ srflx raddr 10.0.0.2 rport 61665 generation 0 ufrag EsAw network-cost 999"
        ),
        (
            "candidate:2 1 TCP 1015021823 ::1 9 typ host tcptype active",
            "candidate:2 1 TCP 1015021823 ::1 9 typ host tcptype active"
        )
    ])
    func wellFormedLinesPass(line: String, attribute: String) throws {
        #expect(try ICECandidateLine.attribute(line) == attribute)
    }

    @Test(arguments: [
        ("", "it does not start with \"candidate:\""),
        ("a=ice-ufrag:abcd", "it does not start with \"candidate:\""),
        (
            "candidate:1 1 UDP 2013266431 127.0.0.1 40000",
            "expected at least 8 fields (foundation component transport priority address port typ type), got 6"
        ),
        ("candidate:1  1 UDP 2013266431 127.0.0.1 40000 typ host", "fields must be separated by single spaces"),
        ("candidate:1 0 UDP 2013266431 127.0.0.1 40000 typ host", "component \"0\" is not a number from 1 to 256"),
        ("candidate:1 1 SCTP 2013266431 127.0.0.1 40000 typ host", "transport \"SCTP\" is neither UDP nor TCP"),
        ("candidate:1 1 UDP high 127.0.0.1 40000 typ host", "priority \"high\" is not a 32-bit number"),
        (
            "candidate:1 1 UDP 2013266431 4b2c1e8a-77a0-4e5e.local 40000 typ host",
            "the address is an mDNS name (4b2c1e8a-77a0-4e5e.local); libnice needs an IP address (the peer hides its host addresses)"
        ),
        ("candidate:1 1 UDP 2013266431 example.com 40000 typ host", "address \"example.com\" is not an IP address"),
        ("candidate:1 1 UDP 2013266431 127.0.0.1 70000 typ host", "port \"70000\" is not a number from 0 to 65535"),
        ("candidate:1 1 UDP 2013266431 127.0.0.1 40000 type host", "expected \"typ\" after the port, got \"type\""),
        (
            "candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ local",
            "candidate type \"local\" is not host, srflx, prflx or relay"
        ),
        (
            "candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ host generation",
            "the attributes after the type must come in name/value pairs"
        ),
        (
            "candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ srflx raddr nowhere rport 9",
            "raddr \"nowhere\" is not an IP address"
        ),
        ("candidate:1 1 TCP 2013266431 127.0.0.1 40000 typ host", "a TCP candidate needs \"tcptype active|passive|so\"")
    ])
    func malformedLinesSayWhy(line: String, reason: String) {
        #expect(throws: ICEError.malformedCandidate(line: line, reason: reason)) {
            try ICECandidateLine.attribute(line)
        }
    }

    /// FuzzICECandidate found these passing the check (Fuzz/Regressions/FuzzICECandidate): libnice
    /// reads the line as a C string, so it would have parsed less than was checked.
    @Test(arguments: [
        "candidate:2728776202 1 udp 2122260223 127.0.0.1 58590 typ host generation 0 ufrag NGoL network-id 1 network-cost 5\u{01}\0\0\0\0\0\0\00",
        "candidate:1 1 udp 2013266431 127.0.0.1 40000 typ host generation 0\r\na=end-of-candidates x",
        "candidate:1 1 udp 2013266431 127.0.0.1 40000 typ host ufrag a\tb"
    ])
    func linesWithControlCharactersAreRefused(line: String) {
        #expect(throws: ICEError.malformedCandidate(line: line, reason: "it holds control characters")) {
            try ICECandidateLine.attribute(line)
        }
    }

    /// FuzzICECandidate's long run found a combining mark after "candidate:" or a space: read as
    /// characters, it joined the separator into one character, so the check split the line
    /// elsewhere than libnice and SDPWire (which split bytes) and a foundation of any characters
    /// went through. Read as scalars, the foundation must be RFC 8839's 1 to 32 ice-chars.
    @Test(arguments: [
        (
            "candidate: \u{356}42163049 1 udp 1677329535 203.0.113.7 61665 typ srflx",
            "fields must be separated by single spaces"
        ),
        (
            "candidate:\u{356}1 1 udp 1677329535 203.0.113.7 61665 typ srflx",
            "foundation \"\u{356}1\" is not 1 to 32 letters, digits, + or /"
        ),
        (
            "candidate:1 1 udp 2013266431 127.0.0.1 \u{301}40000 typ host",
            "port \"\u{301}40000\" is not a number from 0 to 65535"
        ),
        (
            "candidate:" + String(repeating: "7", count: 33) + " 1 udp 1 127.0.0.1 40000 typ host",
            "foundation \"" + String(repeating: "7", count: 33) + "\" is not 1 to 32 letters, digits, + or /"
        )
    ])
    func combiningMarksCannotHideASeparator(line: String, reason: String) {
        #expect(throws: ICEError.malformedCandidate(line: line, reason: reason)) {
            try ICECandidateLine.attribute(line)
        }
    }

    @Test func foundationsOfIceCharsPass() throws {
        let line = "candidate:aB+/09 1 udp 2013266431 127.0.0.1 40000 typ host"
        #expect(try ICECandidateLine.attribute(line) == line)
    }

    @Test func errorsReadAsSentences() {
        let error = ICEError.malformedCandidate(line: "candidate:x", reason: "expected at least 8 fields")
        #expect(error.description == "ice: malformed remote candidate \"candidate:x\": expected at least 8 fields")
    }

    @Test func stunAndTurnURLs() throws {
        #expect(try ICEAgent.STUNServer(url: "stun:stun.example.org") == .init(host: "stun.example.org", port: 3478))
        #expect(try ICEAgent.STUNServer(url: "stun:[2001:db8::1]:19302") == .init(host: "2001:db8::1", port: 19302))
        let udp = try ICEAgent.TURNServer(url: "turn:127.0.0.1:3478?transport=udp", username: "u", credential: "p")
        #expect(udp == .init(host: "127.0.0.1", port: 3478, username: "u", credential: "p", transport: .udp))
        let tcp = try ICEAgent.TURNServer(url: "turn:turn.example.org?transport=tcp", username: "u", credential: "p")
        #expect(tcp.transport == .tcp && tcp.port == 3478)
        let tls = try ICEAgent.TURNServer(url: "turns:turn.example.org", username: "u", credential: "p")
        #expect(tls.transport == .tls && tls.port == 5349)
        #expect(
            throws: ICEError.invalidServerURL(
                "turn:host?transport=sctp", "transport \"sctp\" is not one of udp or tcp for turn:")
        ) {
            try ICEAgent.TURNServer(url: "turn:host?transport=sctp", username: "u", credential: "p")
        }
        #expect(throws: ICEError.invalidServerURL("http://x", "scheme \"http\" is not stun")) {
            try ICEAgent.STUNServer(url: "http://x")
        }
        #expect(throws: ICEError.invalidServerURL("stun:host:0", "port \"0\" is not a number from 1 to 65535")) {
            try ICEAgent.STUNServer(url: "stun:host:0")
        }
        #expect(throws: ICEError.invalidServerURL("stun:", "no host")) { try ICEAgent.STUNServer(url: "stun:") }
    }

    @Test func failureReasonsCountCandidatesAndPairs() {
        func candidate(
            _ type: ICEAgent.CandidateType, _ transport: ICECandidateSummary.Transport = .udp,
            v6: Bool = false
        ) -> ICECandidateSummary {
            ICECandidateSummary(type: type, transport: transport, isIPv6: v6, address: v6 ? "[::1]:9" : "127.0.0.1:9")
        }
        let local = [
            candidate(.host), candidate(.host, v6: true), candidate(.srflx), candidate(.relay),
            candidate(.host, .tcpActive)
        ]
        let remote = [candidate(.host), candidate(.srflx), candidate(.host, .tcpPassive)]
        // host/relay UDP v4 × 2 UDP v4 remotes = 4, TCP active × TCP passive = 1; srflx is checked via its base.
        #expect(ICEFailureReason.pairCount(local: local, remote: remote) == 5)
        #expect(
            ICEFailureReason.describe(local: local, remote: remote)
                == "ICE failed: no candidate pair succeeded (5 local, 3 remote candidates, 5 pairs checked) — the peer is unreachable from here; a TURN server may be needed"
        )
        #expect(
            ICEFailureReason.describe(local: local, remote: [])
                == "ICE failed: no remote candidates were received (5 local candidates) — check the peer's network and the signalling"
        )
    }

    @Test func localAddressesAlwaysStartWithLoopback() {
        let interfaces: [ICELocalAddresses.InterfaceAddress] = [
            .init(interface: "lo", address: "127.0.0.1"), .init(interface: "lo", address: "::1"),
            .init(interface: "eth0", address: "192.168.1.20"), .init(interface: "eth0", address: "fe80::1"),
            .init(interface: "eth0", address: "2001:db8::20"), .init(interface: "docker0", address: "172.17.0.1")
        ]
        #expect(ICELocalAddresses.select(from: interfaces, loopbackOnly: true, allowed: []) == ["127.0.0.1"])
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: false, allowed: [])
                == ["127.0.0.1", "192.168.1.20", "2001:db8::20", "172.17.0.1"])
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: false, allowed: ["eth0"])
                == ["127.0.0.1", "192.168.1.20", "2001:db8::20"])
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: false, allowed: ["172.17.0.1"])
                == ["127.0.0.1", "172.17.0.1"])
        #expect(!ICELocalAddresses.current().isEmpty, "getifaddrs sees at least lo")
    }

    @Test func anotherLoopbackAddressOnlyWhenNamed() {
        let interfaces: [ICELocalAddresses.InterfaceAddress] = [
            .init(interface: "lo", address: "127.0.0.1"), .init(interface: "j0", address: "127.0.0.2"),
            .init(interface: "eth0", address: "192.168.1.20")
        ]
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: false, allowed: [])
                == ["127.0.0.1", "192.168.1.20"])
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: false, allowed: ["j0"]) == [
                "127.0.0.1", "127.0.0.2"
            ])
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: false, allowed: ["127.0.0.2", "eth0"])
                == ["127.0.0.1", "127.0.0.2", "192.168.1.20"])
        #expect(
            ICELocalAddresses.select(from: interfaces, loopbackOnly: true, allowed: ["127.0.0.2"]) == ["127.0.0.1"])
    }
}
