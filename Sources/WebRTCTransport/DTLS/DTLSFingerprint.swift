/// A certificate fingerprint as SDP carries it (RFC 8122 §5): `a=fingerprint:sha-256 AB:CD:…:EF`.
///
/// Two fingerprints compare in constant time over their digest bytes (the algorithm name is not
/// secret), so a comparison never tells by its timing how many leading bytes matched.
public struct DTLSFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// A hash function RFC 8122 allows for fingerprints, with its SDP token and digest length.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "sha-1"
        case sha224 = "sha-224"
        case sha256 = "sha-256"
        case sha384 = "sha-384"
        case sha512 = "sha-512"

        /// SHA-256 and longer. SHA-1 (and SHA-224) count only when a description offers nothing
        /// stronger (see `accepted`).
        public var isStrong: Bool { self == .sha256 || self == .sha384 || self == .sha512 }

        /// Digest length in bytes.
        public var digestLength: Int {
            switch self {
            case .sha1: 20
            case .sha224: 28
            case .sha256: 32
            case .sha384: 48
            case .sha512: 64
            }
        }
    }

    public let algorithm: Algorithm
    /// The digest of the certificate's DER encoding.
    public let digest: [UInt8]

    /// A fingerprint from its parts; `digest` must have the algorithm's length.
    public init(algorithm: Algorithm, digest: [UInt8]) throws(DTLSError) {
        guard digest.count == algorithm.digestLength else {
            throw .invalidFingerprint(
                value: "\(algorithm.rawValue) (\(digest.count) bytes)",
                reason: "\(algorithm.rawValue) digests are \(algorithm.digestLength) bytes")
        }
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Parses the value of an `a=fingerprint:` attribute, e.g. `sha-256 AB:CD:…` (RFC 8122 §5).
    /// The hash name and the hex digits are read without regard to case.
    public init(sdpValue: String) throws(DTLSError) {
        let parts = sdpValue.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2 else {
            throw .invalidFingerprint(
                value: sdpValue, reason: "expected a hash name and a digest separated by one space")
        }
        guard let algorithm = Algorithm(rawValue: parts[0].lowercased()) else {
            throw .invalidFingerprint(
                value: sdpValue,
                reason:
                    "unknown hash \"\(parts[0])\" (known: \(Algorithm.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        var digest: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else {
                throw .invalidFingerprint(value: sdpValue, reason: "\"\(pair)\" is not two hex digits")
            }
            digest.append(byte)
        }
        try self.init(algorithm: algorithm, digest: digest)
    }

    /// Of all the fingerprints a peer's description gives (RFC 8122 §5: any number, at session
    /// and media level), those its certificate may match: the strong ones (SHA-256, -384, -512)
    /// when there are any, else the others (SHA-1). A weak hash offered beside a strong one is
    /// never enough on its own.
    public static func accepted(_ offered: [DTLSFingerprint]) -> [DTLSFingerprint] {
        let strong = offered.filter(\.algorithm.isStrong)
        return strong.isEmpty ? offered : strong
    }

    /// The attribute value: `sha-256 AB:CD:…` (uppercase hex, colon-separated).
    public var sdpValue: String { "\(algorithm.rawValue) \(hexDigest)" }
    public var description: String { sdpValue }

    /// `AB:CD:…`
    public var hexDigest: String {
        digest.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// Constant-time in the digest bytes.
    public static func == (a: DTLSFingerprint, b: DTLSFingerprint) -> Bool {
        guard a.algorithm == b.algorithm, a.digest.count == b.digest.count else { return false }
        var difference: UInt8 = 0
        for index in a.digest.indices { difference |= a.digest[index] ^ b.digest[index] }
        return difference == 0
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(digest)
    }
}
