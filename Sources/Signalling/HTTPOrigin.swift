// RFC 6454 §4 The origin of a URI: its scheme, host and port, lower-cased, the port filled in
// from the scheme when the URI has none.
//
//   https://SFU.example/whip/room1     → https://sfu.example:443
//   http://127.0.0.1:8080/whip?k=v     → http://127.0.0.1:8080
//   http://[::1]/whip                  → http://[::1]:80
import Foundation

/// Where a bearer token may go: WHIP sends it only to the endpoint's origin.
public struct HTTPOrigin: Hashable, Sendable, CustomStringConvertible {
    /// "http" or "https".
    public var scheme: String
    /// Lower-cased, an IPv6 address without brackets.
    public var host: String
    public var port: Int

    /// The origin of an http or https URL; nil for anything else.
    public init?(_ url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", var host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.scheme = scheme
        self.host = host
        port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// "https://sfu.example:443": no user, path or query, so never a credential.
    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
