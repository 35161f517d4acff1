/// `a=fingerprint:<hash-func> <hex:hex:...>` (RFC 8122 §5): the hash of the DTLS certificate the
/// writer will present, e.g. `a=fingerprint:sha-256 D1:58:…:ED` (32 bytes).
public struct Fingerprint: Hashable, Sendable {
    /// The hash function as written, e.g. `sha-256`. Compare with `algorithm.lowercased()`.
    public var algorithm: String
    public var bytes: [UInt8]

    public init(algorithm: String = "sha-256", bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Digest lengths of the hash functions RFC 8122 names; any other function is taken as it is.
    static let digestLengths: [String: Int] = [
        "sha-1": 20, "sha-224": 28, "sha-256": 32, "sha-384": 48, "sha-512": 64, "md5": 16, "md2": 16
    ]

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard parts.count == 2 else {
            throw SDPError(reason: "a=fingerprint needs a hash function and a hex value, e.g. sha-256 AB:CD:…")
        }
        algorithm = String(parts[0])
        var bytes: [UInt8] = []
        for pair in parts[1].unicodeScalars.split(separator: ":", omittingEmptySubsequences: false) {
            guard let byte = hexByte(pair) else {
                throw SDPError(reason: "a=fingerprint value must be hex byte pairs separated by ':'")
            }
            bytes.append(byte)
        }
        if let need = Fingerprint.digestLengths[algorithm.lowercased()], need != bytes.count {
            throw SDPError(reason: "a=fingerprint \(algorithm) needs \(need) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Upper-case hex pairs joined by ':', the way browsers write them.
    public var hexString: String {
        bytes.map { byte in
            let digits = Array("0123456789ABCDEF".unicodeScalars)
            return String(String.UnicodeScalarView([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]))
        }.joined(separator: ":")
    }

    var sdpValue: String { "\(algorithm) \(hexString)" }
}

/// `a=setup` (RFC 4145 §4, RFC 5763 §5): which side starts the DTLS handshake.
public enum DTLSSetup: String, Hashable, Sendable, CaseIterable {
    /// Offer: "either; you choose". JSEP offers always say this.
    case actpass
    /// We start the handshake (DTLS client).
    case active
    /// We wait for the other side (DTLS server).
    case passive
    /// No connection for now.
    case holdconn

    /// The role an answerer takes to an offer of `offered` (RFC 5763 §5; JSEP answers `active`
    /// to `actpass`).
    public static func answering(_ offered: DTLSSetup) -> DTLSSetup {
        switch offered {
        case .actpass, .passive: return .active
        case .active: return .passive
        case .holdconn: return .holdconn
        }
    }

    init(sdpValue value: Substring) throws(SDPError) {
        guard let role = DTLSSetup(rawValue: String(value)) else {
            throw SDPError(reason: "a=setup must be actpass, active, passive or holdconn")
        }
        self = role
    }
}
