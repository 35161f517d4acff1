/// `typ` of an ICE candidate (RFC 8445 §5.1.1): where the address came from.
public struct CandidateType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    /// An address on a local interface.
    public static let host: CandidateType = "host"
    /// Server reflexive: our address as a STUN server saw it.
    public static let srflx: CandidateType = "srflx"
    /// Peer reflexive: learned from a connectivity check.
    public static let prflx: CandidateType = "prflx"
    /// An address on a TURN server.
    public static let relay: CandidateType = "relay"
}

/// `tcptype` of a TCP candidate (RFC 6544 §4.5).
public struct TCPType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public static let active: TCPType = "active"
    public static let passive: TCPType = "passive"
    public static let simultaneousOpen: TCPType = "so"
}

/// One ICE candidate (RFC 8839 §5.1):
///
///     candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type>
///               [raddr <address>] [rport <port>] *(<extension name> <extension value>)
///
/// Chromium writes e.g. `candidate:2728776202 1 udp 2122260223 127.0.0.1 49376 typ host
/// generation 0 ufrag NGoL network-id 1 network-cost 50`. The extensions Chromium uses are fields;
/// any other extension pair is kept in order.
public struct ICECandidate: Hashable, Sendable {
    public var foundation: String
    /// 1 for RTP; 2 for RTCP when RTCP is not muxed.
    public var component: UInt16
    /// As written: `udp`, `tcp` (Firefox writes `UDP`). See `isUDP`.
    public var transport: String
    public var priority: UInt32
    /// An IP address, or an mDNS name such as `1f4712db-ea17-4bcf-a596-105139dfd8bf.local`.
    public var address: String
    public var port: UInt16
    public var type: CandidateType
    public var relatedAddress: String?
    public var relatedPort: UInt16?
    public var tcpType: TCPType?
    public var generation: UInt32?
    public var ufrag: String?
    public var networkID: UInt32?
    public var networkCost: UInt32?
    /// Extension pairs not modelled above, in order.
    public var extensions: [Extension]

    /// An extension attribute pair, e.g. `("network-cost", "50")` if it were not modelled.
    public struct Extension: Hashable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(
        foundation: String, component: UInt16 = 1, transport: String = "udp", priority: UInt32,
        address: String, port: UInt16, type: CandidateType = .host,
        relatedAddress: String? = nil, relatedPort: UInt16? = nil, tcpType: TCPType? = nil,
        generation: UInt32? = nil, ufrag: String? = nil, networkID: UInt32? = nil,
        networkCost: UInt32? = nil, extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.tcpType = tcpType
        self.generation = generation
        self.ufrag = ufrag
        self.networkID = networkID
        self.networkCost = networkCost
        self.extensions = extensions
    }

    public var isUDP: Bool { transport.lowercased() == "udp" }

    /// Reads a trickled candidate: `candidate:…`, `a=candidate:…`, or what follows `candidate:`.
    /// Trailing CR and LF are ignored; one inside is an error.
    public init(parsing text: String) throws(SDPError) {
        var value = Substring(text)
        while let last = value.unicodeScalars.last, last == "\r" || last == "\n" {
            value = Substring(value.unicodeScalars.dropLast())
        }
        value = trimmed(value)
        // Prefixes by scalars, not characters: "candidate:" followed by a combining mark is one
        // character ":́" to `hasPrefix`, and the prefix would stay in the foundation.
        if value.unicodeScalars.starts(with: "a=".unicodeScalars) {
            value = Substring(value.unicodeScalars.dropFirst(2))
        }
        if value.unicodeScalars.starts(with: "candidate:".unicodeScalars) {
            value = Substring(value.unicodeScalars.dropFirst(10))
        }
        do throws(SDPError) {
            if value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                throw SDPError(reason: "candidate must be one line (it has a line break or NUL inside)")
            }
            try self.init(sdpValue: value)
        } catch {
            throw SDPError(text: text, reason: error.reason)
        }
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard parts.count >= 8 else {
            throw SDPError(
                reason:
                    "candidate needs at least 8 fields (foundation, component, transport, priority, address, port, typ, type), got \(parts.count)"
            )
        }
        // RFC 8839 §5.1: foundation = 1*32ice-char, ice-char = ALPHA / DIGIT / "+" / "/".
        guard parts[0].unicodeScalars.count <= 32,
            parts[0].unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "+" || $0 == "/")
            })
        else {
            throw SDPError(
                reason:
                    "candidate foundation must be 1 to 32 letters, digits, + or /, not \"\(SDPError.shortened(String(parts[0])))\""
            )
        }
        foundation = String(parts[0])
        component = try decimal(parts[1], "candidate component")
        transport = String(parts[2])
        priority = try decimal(parts[3], "candidate priority")
        address = String(parts[4])
        port = try decimal(parts[5], "candidate port")
        guard parts[6] == "typ" else {
            throw SDPError(
                reason: "candidate needs \"typ\" after the port, found \"\(SDPError.shortened(String(parts[6])))\"")
        }
        type = CandidateType(rawValue: String(parts[7]))
        extensions = []
        var index = 8
        while index < parts.count {
            let name = parts[index]
            guard index + 1 < parts.count else {
                throw SDPError(reason: "candidate extension \"\(SDPError.shortened(String(name)))\" has no value")
            }
            let value = parts[index + 1]
            switch name {
            case "raddr": relatedAddress = String(value)
            case "rport": relatedPort = try decimal(value, "candidate rport")
            case "tcptype": tcpType = TCPType(rawValue: String(value))
            case "generation": generation = try decimal(value, "candidate generation")
            case "ufrag": ufrag = String(value)
            case "network-id": networkID = try decimal(value, "candidate network-id")
            case "network-cost": networkCost = try decimal(value, "candidate network-cost")
            default: extensions.append(Extension(name: String(name), value: String(value)))
            }
            index += 2
        }
    }

    /// The attribute value, without `candidate:` (what follows `a=candidate:` in SDP).
    public var sdpValue: String {
        var parts = [
            foundation, String(component), transport, String(priority), address, String(port),
            "typ", type.rawValue
        ]
        if let relatedAddress { parts += ["raddr", relatedAddress] }
        if let relatedPort { parts += ["rport", String(relatedPort)] }
        if let tcpType { parts += ["tcptype", tcpType.rawValue] }
        if let generation { parts += ["generation", String(generation)] }
        if let ufrag { parts += ["ufrag", ufrag] }
        if let networkID { parts += ["network-id", String(networkID)] }
        if let networkCost { parts += ["network-cost", String(networkCost)] }
        for pair in extensions { parts += [pair.name, pair.value] }
        return parts.joined(separator: " ")
    }

    /// `candidate:…`, the form `RTCIceCandidate.candidate` and trickle messages carry.
    public var candidateString: String { "candidate:" + sdpValue }
}
