// A URL as it may be printed or logged (RFC 3986 §3: scheme "://" [userinfo "@"] host [":" port]
// path ["?" query] ["#" fragment]): what names the server stays, what can carry a credential goes.
//
//   http://127.0.0.1:8080/r/demo?t=9f2c…         → http://127.0.0.1:8080/r/demo?t=…
//   https://user:pw@sfu.example/whip?token=abc   → https://sfu.example/whip?token=…
//   https://sfu.example/whip#access_token=abc     → https://sfu.example/whip#…

/// `url` with its user and password removed and every query value and the fragment replaced by
/// "…". Every place that prints or logs a room link or a WHIP URL passes it through this one
/// function. Text that is not a URL is treated the same way (a "?" still starts a query).
public func redactedURL(_ url: String) -> String {
    var rest = Substring(url)
    var fragment = ""
    if let hash = rest.firstIndex(of: "#") {
        fragment = rest.index(after: hash) == rest.endIndex ? "#" : "#…"
        rest = rest[..<hash]
    }
    var query: Substring?
    if let question = rest.firstIndex(of: "?") {
        query = rest[rest.index(after: question)...]
        rest = rest[..<question]
    }
    var text = ""
    if let separator = rest.firstRange(of: "://") {
        text += rest[..<separator.upperBound]
        let afterScheme = rest[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        text += authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        text += afterScheme[authorityEnd...]
    } else {
        text += rest
    }
    if let query {
        let items = query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return item.isEmpty ? "" : "…" }
            return item[..<equals] + "=…"
        }
        text += "?" + items.joined(separator: "&")
    }
    return text + fragment
}
