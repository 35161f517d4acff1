// Source attributes (RFC 5576): a=ssrc and a=ssrc-group.

/// `a=ssrc:<ssrc> <attribute>[:<value>]`, e.g. `a=ssrc:1860184539 cname:TQlK/ij+ZSLZwqBx` or
/// `a=ssrc:1860184539 msid:<stream id> <track id>`.
public struct SSRCAttribute: Hashable, Sendable {
    public var ssrc: UInt32
    public var name: String
    public var value: String?

    public init(ssrc: UInt32, name: String, value: String? = nil) {
        self.ssrc = ssrc
        self.name = name
        self.value = value
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let trimmedValue = trimmed(value)
        let scalars = trimmedValue.unicodeScalars
        let split = scalars.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? scalars.endIndex
        ssrc = try decimal(Substring(scalars[..<split]), "a=ssrc SSRC")
        let rest = trimmed(Substring(scalars[split...]))
        let (name, attributeValue) = splitOnce(rest, at: ":")
        let cleanName = trimmed(name)
        guard !cleanName.isEmpty else {
            throw SDPError(reason: "a=ssrc needs an SSRC and an attribute, e.g. 1234 cname:abc")
        }
        self.name = String(cleanName)
        self.value = attributeValue.map { String(trimmed($0)) }
    }

    var sdpValue: String { "\(ssrc) \(name)" + (value.map { ":\($0)" } ?? "") }
}

/// `a=ssrc-group:<semantics> <ssrc> ...`, e.g. `a=ssrc-group:FID 1860184539 4216065440`: the
/// media SSRC and its RTX SSRC.
public struct SSRCGroup: Hashable, Sendable {
    /// `FID` (RTX, RFC 4588), `SIM` (simulcast), `FEC-FR` …
    public var semantics: String
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard let first = parts.first else { throw SDPError(reason: "a=ssrc-group needs semantics, e.g. FID") }
        semantics = String(first)
        var ssrcs: [UInt32] = []
        for part in parts.dropFirst() { ssrcs.append(try decimal(part, "a=ssrc-group SSRC")) }
        self.ssrcs = ssrcs
    }

    var sdpValue: String { ([semantics] + ssrcs.map(String.init)).joined(separator: " ") }
}

/// `a=rtcp:<port> [<nettype> <addrtype> <address>]` (RFC 3605), e.g. `a=rtcp:9 IN IP4 0.0.0.0`.
public struct RTCPAddress: Hashable, Sendable {
    public var port: UInt16
    public var connection: ConnectionData?

    public init(port: UInt16, connection: ConnectionData? = nil) {
        self.port = port
        self.connection = connection
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard parts.count == 1 || parts.count == 4 else {
            throw SDPError(reason: "a=rtcp needs a port, optionally followed by network type, address type and address")
        }
        port = try decimal(parts[0], "a=rtcp port")
        connection =
            parts.count == 4
            ? ConnectionData(networkType: String(parts[1]), addressType: String(parts[2]), address: String(parts[3]))
            : nil
    }

    var sdpValue: String { String(port) + (connection.map { " " + $0.sdpValue } ?? "") }
}
