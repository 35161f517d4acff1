import ShareCore

/// Why a WHIP exchange failed, in words a person can act on. Each message names the URL (without
/// user, password or query values: `redactedURL`) and, where the server said something, its status
/// and the first line of what it said.
public enum WHIPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The endpoint or a Location is not an http or https URL.
    case invalidURL(String)
    /// The bearer token holds characters a header cannot carry.
    case invalidToken
    /// Nothing came back in time.
    case noAnswer(url: String, after: Duration)
    /// The connection failed.
    case unreachable(url: String, reason: String)
    /// A 4xx or 5xx answer.
    case refused(url: String, status: Int, reason: String, firstLine: String?)
    /// A status WHIP does not use at this step (e.g. 200 to the POST, 302).
    case unexpectedStatus(url: String, status: Int, expected: String)
    case missingLocation(url: String)
    case badLocation(url: String, location: String)
    case notSDP(url: String, contentType: String?)
    case emptyAnswer(url: String)
    case invalidAnswer(url: String, firstLine: String)
    case answerTooLarge(url: String, limit: Int)
    case redirectWithoutLocation(url: String, status: Int)
    /// A redirect (307/308) or a 201's Location to another origin than the endpoint's (another
    /// scheme, host or port): refused before any request, and so the token, goes there.
    case locationLeavesOrigin(url: String, status: Int, location: String)
    case redirectLoop(url: String)
    case tooManyRedirects(url: String, limit: Int)
    /// 503 every time, or a 503 without a usable Retry-After.
    case busy(url: String, attempts: Int)
    /// 412: the session changed (another ICE restart) since our ETag.
    case etagMismatch(url: String)
    case iceRestartNotSupported(url: String, status: Int)
    case invalidFragment(url: String, reason: String)
    /// trickle or restartICE before publish (or after stop).
    case notPublished
    case alreadyPublished(resource: String)
    case cancelled(url: String)
    case loopStopped

    public var description: String {
        switch self {
        case .invalidURL(let url):
            return "WHIP: '\(redactedURL(url))' is not an http or https URL — check the endpoint address"
        case .invalidToken:
            return "WHIP: the bearer token contains line breaks or control characters — check how it was pasted"
        case .noAnswer(let url, let after):
            return
                "WHIP: no answer from \(redactedURL(url)) within \(after.secondsText) — check that the server is up and reachable"
        case .unreachable(let url, let reason):
            return "WHIP: could not reach \(redactedURL(url)): \(reason) — check the address and your network"
        case .refused(let url, let status, let reason, let firstLine):
            var text = "WHIP: \(redactedURL(url)) answered \(status)\(reason.isEmpty ? "" : " \(reason)")"
            if let firstLine { text += ": \(firstLine)" }
            switch status {
            case 401, 403: text += " — check the bearer token"
            case 404: text += " — check the endpoint URL"
            default: break
            }
            return text
        case .unexpectedStatus(let url, let status, let expected):
            return
                "WHIP: \(redactedURL(url)) answered \(status) where WHIP expects \(expected); the server does not speak WHIP as RFC 9725 says"
        case .missingLocation(let url):
            return
                "WHIP: \(redactedURL(url)) answered 201 Created without a Location header, so the session could not be managed or ended"
        case .badLocation(let url, let location):
            return
                "WHIP: \(redactedURL(url)) gave a Location '\(redactedURL(location).prefix(200))' that is not an http or https URL; refused"
        case .notSDP(let url, let contentType):
            return
                "WHIP: \(redactedURL(url)) answered with \(contentType.map { "'\($0)'" } ?? "no Content-Type") instead of application/sdp"
        case .emptyAnswer(let url):
            return "WHIP: \(redactedURL(url)) answered 201 Created with an empty SDP answer"
        case .invalidAnswer(let url, let firstLine):
            return
                "WHIP: \(redactedURL(url)) answered with a body that is not SDP (it starts \"\(firstLine)\", not \"v=0\")"
        case .answerTooLarge(let url, let limit):
            return "WHIP: the answer from \(redactedURL(url)) is larger than \(limit) bytes; refused"
        case .redirectWithoutLocation(let url, let status):
            return "WHIP: \(redactedURL(url)) answered \(status) (a redirect) without a Location header"
        case .locationLeavesOrigin(let url, let status, let location):
            let here = HTTPOrigin(url), there = HTTPOrigin(location)
            let what = status == 201 ? "answered 201 Created with a Location on" : "redirected (\(status)) to"
            let place = there.map { "\($0)" } ?? "another origin"
            if here?.scheme == "https", there?.scheme == "http" {
                return
                    "WHIP: \(redactedURL(url)) \(what) plain http (\(place)); refused: the bearer token and the session "
                    + "would travel unencrypted"
            }
            return
                "WHIP: \(redactedURL(url)) \(what) another origin (\(place)); refused: the bearer token goes only to "
                + "\(here.map { "\($0)" } ?? "the endpoint's origin"), where the endpoint is"
        case .redirectLoop(let url):
            return "WHIP: the redirects loop back to \(redactedURL(url)); refused"
        case .tooManyRedirects(let url, let limit):
            return "WHIP: more than \(limit) redirects starting at \(redactedURL(url)); refused"
        case .busy(let url, let attempts):
            return
                "WHIP: \(redactedURL(url)) is busy (503) after \(attempts) attempt\(attempts == 1 ? "" : "s") — try again later"
        case .etagMismatch(let url):
            return
                "WHIP: \(redactedURL(url)) refused the update (412): the session changed since it was last seen (ETag mismatch)"
        case .iceRestartNotSupported(let url, let status):
            return
                "WHIP: \(redactedURL(url)) does not support ICE restarts (answered \(status)); the session has to be started again"
        case .invalidFragment(let url, let reason):
            return "WHIP: the ICE restart answer from \(redactedURL(url)) is not a valid SDP fragment: \(reason)"
        case .notPublished:
            return "WHIP: there is no session yet (publish first)"
        case .alreadyPublished(let resource):
            return "WHIP: a session is already running at \(redactedURL(resource)); stop it before publishing again"
        case .cancelled(let url):
            return "WHIP: the request to \(redactedURL(url)) was cancelled"
        case .loopStopped:
            return "WHIP: the GLib loop has stopped; no request can run"
        }
    }

    init(_ error: HTTPError) {
        switch error {
        case .invalidURL(let url): self = .invalidURL(url)
        case .timedOut(let url, let after): self = .noAnswer(url: url, after: after)
        case .cancelled(let url): self = .cancelled(url: url)
        case .transport(let url, let reason): self = .unreachable(url: url, reason: reason)
        case .bodyTooLarge(let url, let limit): self = .answerTooLarge(url: url, limit: limit)
        case .loopStopped: self = .loopStopped
        }
    }
}
