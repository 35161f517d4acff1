extension ICEAgent {
    /// How one ICE agent gathers and checks. Values only: nothing here touches libnice.
    public struct Configuration: Sendable, Equatable {
        /// RFC 8445 §6.1.1: the offerer of a call is controlling. libnice resolves a conflict
        /// (both sides claiming the same role) with the tie-breaker, as the RFC says.
        public enum Role: String, Sendable, Equatable { case controlling, controlled }

        public var role: Role
        /// A STUN server for server-reflexive candidates.
        public var stunServer: STUNServer?
        /// TURN servers for relay candidates (`Link: rel="ice-server"` entries, room configuration).
        public var turnServers: [TURNServer]
        /// Only 127.0.0.1 (tests, and machines where nothing else should be offered).
        public var loopbackOnly: Bool
        /// Interface names ("eth0") or addresses ("192.168.1.20") to offer besides 127.0.0.1;
        /// empty offers every interface that is up.
        public var allowedInterfaces: [String]
        /// RFC 6544 ICE-TCP host candidates. Off by default: browsers seldom need it and it
        /// doubles the pairs to check.
        public var iceTCP: Bool
        /// Pair relay candidates only (libnice "force-relay"), e.g. to hide host addresses.
        public var relayOnly: Bool
        /// How long connectivity checks wait and retry; `nil` keeps libnice's defaults
        /// (500 ms first retransmission, 3 retransmissions, 2000 ms over TCP).
        public var checkTiming: CheckTiming?
        /// How long to keep listening after the peer signalled end-of-candidates without sending
        /// any: its own checks may still reach us (and teach us a peer-reflexive candidate). libnice
        /// never gives up on an empty check list by itself; after this the agent fails, saying why.
        public var noRemoteCandidatesGrace: Duration

        public init(
            role: Role, stunServer: STUNServer? = nil, turnServers: [TURNServer] = [],
            loopbackOnly: Bool = false, allowedInterfaces: [String] = [], iceTCP: Bool = false,
            relayOnly: Bool = false, checkTiming: CheckTiming? = nil,
            noRemoteCandidatesGrace: Duration = .seconds(10)
        ) {
            self.role = role
            self.stunServer = stunServer
            self.turnServers = turnServers
            self.loopbackOnly = loopbackOnly
            self.allowedInterfaces = allowedInterfaces
            self.iceTCP = iceTCP
            self.relayOnly = relayOnly
            self.checkTiming = checkTiming
            self.noRemoteCandidatesGrace = noRemoteCandidatesGrace
        }
    }

    /// Connectivity-check timing (libnice's "stun-initial-timeout", "stun-max-retransmissions",
    /// "stun-reliable-timeout"). Shorter values make an unreachable peer fail sooner.
    public struct CheckTiming: Sendable, Equatable {
        public var initialTimeoutMilliseconds: UInt32
        public var maxRetransmissions: UInt32
        public var reliableTimeoutMilliseconds: UInt32
        public init(
            initialTimeoutMilliseconds: UInt32 = 500, maxRetransmissions: UInt32 = 3,
            reliableTimeoutMilliseconds: UInt32 = 2000
        ) {
            self.initialTimeoutMilliseconds = initialTimeoutMilliseconds
            self.maxRetransmissions = maxRetransmissions
            self.reliableTimeoutMilliseconds = reliableTimeoutMilliseconds
        }
    }

    /// A STUN server: `stun:host[:port]` (RFC 7064).
    public struct STUNServer: Sendable, Equatable {
        public var host: String
        public var port: UInt16
        public init(host: String, port: UInt16 = 3478) {
            self.host = host
            self.port = port
        }
        /// Parses `stun:host[:port]`.
        public init(url: String) throws(ICEError) {
            let parsed = try ICEServerURL(url, schemes: ["stun"])
            self.init(host: parsed.host, port: parsed.port ?? 3478)
        }
    }

    /// A TURN server: `turn:host[:port][?transport=udp|tcp]` or `turns:host[:port]` (RFC 7065),
    /// with its long-term credentials.
    public struct TURNServer: Sendable, Equatable {
        public enum Transport: String, Sendable, Equatable { case udp, tcp, tls }
        public var host: String
        public var port: UInt16
        public var username: String
        public var credential: String
        public var transport: Transport

        public init(
            host: String, port: UInt16? = nil, username: String, credential: String,
            transport: Transport = .udp
        ) {
            self.host = host
            self.port = port ?? (transport == .tls ? 5349 : 3478)
            self.username = username
            self.credential = credential
            self.transport = transport
        }

        /// Parses `turn:host[:port][?transport=udp|tcp]` and `turns:host[:port][?transport=tcp]`.
        public init(url: String, username: String, credential: String) throws(ICEError) {
            let parsed = try ICEServerURL(url, schemes: ["turn", "turns"])
            let transport: Transport
            switch (parsed.scheme, parsed.transport) {
            case ("turns", nil), ("turns", "tcp"): transport = .tls
            case ("turn", nil), ("turn", "udp"): transport = .udp
            case ("turn", "tcp"): transport = .tcp
            case (_, let other?):
                throw .invalidServerURL(url, "transport \"\(other)\" is not one of udp or tcp for \(parsed.scheme):")
            default: throw .invalidServerURL(url, "unknown scheme")
            }
            self.init(
                host: parsed.host, port: parsed.port, username: username, credential: credential,
                transport: transport)
        }
    }
}

/// The parts of an RFC 7064/7065 URL: `scheme:host[:port][?transport=x]` (IPv6 in brackets).
struct ICEServerURL: Equatable {
    let scheme: String
    let host: String
    let port: UInt16?
    let transport: String?

    init(_ url: String, schemes: Set<String>) throws(ICEError) {
        guard let colon = url.firstIndex(of: ":") else {
            throw .invalidServerURL(url, "expected \(schemes.sorted().joined(separator: " or ")):host[:port]")
        }
        let scheme = url[..<colon].lowercased()
        guard schemes.contains(scheme) else {
            throw .invalidServerURL(url, "scheme \"\(scheme)\" is not \(schemes.sorted().joined(separator: " or "))")
        }
        var rest = Substring(url[url.index(after: colon)...])
        var transport: String?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = rest[..<question]
            for item in query.split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].lowercased() == "transport" { transport = pair[1].lowercased() }
            }
        }
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }  // tolerated, though RFC 7064 has none
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw .invalidServerURL(url, "unclosed [ in an IPv6 host")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw .invalidServerURL(url, "unexpected \"\(after)\" after the host")
            }
        } else if let portColon = rest.lastIndex(of: ":") {
            host = rest[..<portColon]
            portText = rest[rest.index(after: portColon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw .invalidServerURL(url, "no host") }
        var port: UInt16?
        if let portText {
            guard let value = UInt16(portText), value > 0 else {
                throw .invalidServerURL(url, "port \"\(portText)\" is not a number from 1 to 65535")
            }
            port = value
        }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
        self.transport = transport
    }
}
