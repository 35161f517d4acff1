/// Why protecting or unprotecting one packet failed. Every failure is a value; none is fatal to the
/// session (the next packet is processed as usual).
public enum SRTPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The packet's index was already received (libsrtp's replay window).
    case replayed
    /// The packet's index is older than the replay window can judge.
    case tooOld
    /// The authentication tag did not verify: damaged, forged, or protected with other keys.
    case authenticationFailed
    /// Too short to be the packet named.
    case packetTooShort(what: String, got: Int, need: Int)
    /// The keys are worn out (libsrtp's key usage limit); the session needs new keys (a new DTLS handshake).
    case keyExpired
    /// The keys do not fit the profile.
    case invalidKeys(String)
    /// libsrtp could not be initialised.
    case libraryUnavailable(String)
    /// Any other libsrtp status (its number and meaning).
    case failed(operation: String, status: UInt32, meaning: String)

    public var description: String {
        switch self {
        case .replayed:
            return "srtp: packet replayed (its index was already received)"
        case .tooOld:
            return "srtp: packet too old for the replay window"
        case .authenticationFailed:
            return "srtp: authentication failed (packet damaged, forged, or under other keys)"
        case let .packetTooShort(what, got, need):
            return "srtp: \(what) too short (got \(got) bytes, need \(need))"
        case .keyExpired:
            return "srtp: keys expired — the connection needs a new DTLS handshake"
        case let .invalidKeys(reason):
            return "srtp: invalid keys (\(reason))"
        case let .libraryUnavailable(reason):
            return "srtp: libsrtp could not start (\(reason))"
        case let .failed(operation, status, meaning):
            return "srtp: \(operation) failed (libsrtp status \(status): \(meaning))"
        }
    }
}
