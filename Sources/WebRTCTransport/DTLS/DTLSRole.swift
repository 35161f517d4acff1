/// Which end of the DTLS handshake this is. `a=setup` decides (RFC 5763 §5, RFC 8842): the
/// `active` end is the DTLS client, the `passive` end the DTLS server.
public enum DTLSRole: String, Hashable, Sendable, CustomStringConvertible {
    case client
    case server

    /// From our own `a=setup` value: `active` → client, `passive` → server; `actpass` (an offer
    /// not yet answered) or anything else decides nothing.
    public init?(localSetup: String) {
        switch localSetup.lowercased() {
        case "active": self = .client
        case "passive": self = .server
        default: return nil
        }
    }

    /// From the peer's `a=setup` value: its `active` makes us the server, its `passive` the client,
    /// and its `actpass` (we are answering) makes us `active`, the client, as RFC 8842 §5.3 advises.
    public init?(remoteSetup: String) {
        switch remoteSetup.lowercased() {
        case "active": self = .server
        case "passive", "actpass": self = .client
        default: return nil
        }
    }

    /// Our `a=setup` value for this role.
    public var setupAttribute: String { self == .client ? "active" : "passive" }

    public var description: String { rawValue }
}
