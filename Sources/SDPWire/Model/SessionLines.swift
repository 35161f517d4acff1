// The session's fixed lines (RFC 8866 §5): o=, t=, c=, b=, and the rarer ones kept as they are.

/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>` (RFC 8866 §5.2).
/// Chromium writes `o=- 6956390010296105571 2 IN IP4 127.0.0.1`.
public struct Origin: Hashable, Sendable {
    public var username: String
    /// Kept as text: it is an identifier, and some peers write more digits than 64 bits hold.
    public var sessionID: String
    /// Raised by one with every new offer or answer from the same side (RFC 3264 §8).
    public var sessionVersion: UInt64
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(
        username: String = "-", sessionID: String, sessionVersion: UInt64,
        networkType: String = "IN", addressType: String = "IP4", address: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard parts.count == 6 else {
            throw SDPError(
                reason:
                    "o= line needs 6 fields (username, session id, version, network, address type, address), got \(parts.count)"
            )
        }
        username = String(parts[0])
        sessionID = String(parts[1])
        sessionVersion = try decimal(parts[2], "o= session version")
        networkType = String(parts[3])
        addressType = String(parts[4])
        address = String(parts[5])
    }

    var sdpValue: String { "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)" }
}

/// `t=<start-time> <stop-time>` (RFC 8866 §5.9); JSEP always writes `t=0 0`.
public struct Timing: Hashable, Sendable {
    public var start: UInt64
    public var stop: UInt64

    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard parts.count == 2 else { throw SDPError(reason: "t= line needs a start and a stop time") }
        start = try decimal(parts[0], "t= start time")
        stop = try decimal(parts[1], "t= stop time")
    }

    var sdpValue: String { "\(start) \(stop)" }
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 §5.7), e.g. `c=IN IP4 127.0.0.1`.
public struct ConnectionData: Hashable, Sendable {
    public var networkType: String
    public var addressType: String
    /// The address as written (a multicast address may carry `/ttl`).
    public var address: String

    public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    /// `IN IP4 0.0.0.0`: what JSEP writes when no candidate is known yet.
    public static let unspecified = ConnectionData(address: "0.0.0.0")

    init(sdpValue value: Substring, what: String = "c= line") throws(SDPError) {
        let parts = fields(value)
        guard parts.count == 3 else {
            throw SDPError(reason: "\(what) needs a network type, an address type and an address")
        }
        networkType = String(parts[0])
        addressType = String(parts[1])
        address = String(parts[2])
    }

    var sdpValue: String { "\(networkType) \(addressType) \(address)" }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 §5.8), e.g. `b=AS:2500` (kbit/s) or `b=TIAS:2500000` (bit/s).
public struct Bandwidth: Hashable, Sendable {
    public var type: String
    public var value: UInt64

    public init(type: String, value: UInt64) {
        self.type = type
        self.value = value
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let (type, number) = splitOnce(value, at: ":")
        guard let number, isToken(type) else { throw SDPError(reason: "b= line must look like b=<type>:<number>") }
        self.type = String(type)
        self.value = try decimal(trimmed(number), "b= bandwidth")
    }

    var sdpValue: String { "\(type):\(value)" }
}

/// A line this module reads but does not interpret (`i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=`, or a
/// second `t=`), kept so it is written back.
public struct SDPLine: Hashable, Sendable {
    /// The type letter, e.g. `"i"`.
    public var type: Unicode.Scalar
    public var value: String

    public init(type: Unicode.Scalar, value: String) {
        self.type = type
        self.value = value
    }
}

/// An attribute this module does not model, e.g. `a=rtcp-xr:rcvr-rtt=all` or `a=sctp-port:5000`,
/// kept in order and written back as it came.
public struct SDPAttribute: Hashable, Sendable {
    public var name: String
    /// Everything after the first `:`, untouched; nil for a property attribute (`a=name`).
    public var value: String?

    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
    }

    var sdpLine: String { value.map { "a=\(name):\($0)" } ?? "a=\(name)" }
}
