// The two URL questions WHIP asks (RFC 3986 §5, RFC 9110 §4.2): where a `Location` field points,
// and whether a URL is one HTTPClient can fetch. Plain Foundation, apart from the client.
import Foundation

enum HTTPURL {
    /// `location` resolved against `base` (RFC 3986 §5), if the result is an http or https URL.
    static func resolve(_ location: String, against base: String) -> String? {
        let trimmed = location.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, let baseURL = URL(string: base),
            let resolved = URL(string: trimmed, relativeTo: baseURL)?.absoluteURL,
            resolved.host?.isEmpty == false
        else { return nil }
        let text = resolved.absoluteString
        return scheme(of: text) == nil ? nil : text
    }

    /// "http" or "https" (lower-cased) when `url` is one, else nil.
    static func scheme(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", components.host?.isEmpty == false
        else { return nil }
        return scheme
    }
}
