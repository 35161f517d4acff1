// HTTP requests and responses as plain values (RFC 9110): what `HTTPClient` sends and returns.
// Field names are matched case-insensitively everywhere (RFC 9110 §5.1).
import Foundation
import ShareCore

/// Header fields in the order they were sent or received. A name may appear more than once
/// (`Link` often does); lookups ignore the case of names.
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Hashable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field] = []

    public init() {}
    public init(_ fields: [Field]) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(_ name: String, _ value: String) { fields.append(Field(name: name, value: value)) }

    /// Replaces every field named `name` (any case) with one field, or removes them when `value` is nil.
    public mutating func set(_ name: String, _ value: String?) {
        fields.removeAll { Self.same($0.name, name) }
        if let value { add(name, value) }
    }

    /// The first value of `name`, any case.
    public subscript(name: String) -> String? { fields.first { Self.same($0.name, name) }?.value }

    /// Every value of `name`, any case, in order (each field separately; comma-joined lists are
    /// left for the caller, who knows the field's grammar).
    public func values(_ name: String) -> [String] { fields.filter { Self.same($0.name, name) }.map(\.value) }

    public func contains(_ name: String) -> Bool { fields.contains { Self.same($0.name, name) } }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    private static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String, url: String, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPResponse: Sendable {
    /// The status code, e.g. 201.
    public var status: Int
    /// The reason phrase the server sent, e.g. "Created" (may be empty).
    public var reason: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The URL this response came from. `HTTPClient` follows no redirects, so it is the request's.
    public var url: String

    public init(status: Int, reason: String = "", headers: HTTPHeaders = [:], body: [UInt8] = [], url: String) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The body as text (invalid UTF-8 repaired), for messages and SDP.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The first non-empty line of the body, cut to 200 characters, control characters (a hostile
    /// server's terminal escapes) shown as "?": what an error message quotes.
    public var firstBodyLine: String? {
        let line = text.split(whereSeparator: \.isNewline).lazy
            .map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
        guard let line else { return nil }
        let shown = String(
            line.prefix(200).map { character -> Character in
                character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "?" : character
            })
        return line.count > 200 ? shown + "…" : shown
    }

    /// `Content-Type` without parameters, lower-cased: "application/sdp".
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }
}

public enum HTTPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The URL cannot be parsed, or its scheme is not http or https.
    case invalidURL(String)
    /// Nothing (or not the whole response) arrived within the time allowed.
    case timedOut(url: String, after: Duration)
    /// The caller's task was cancelled.
    case cancelled(url: String)
    /// The connection failed: refused, reset, name not found, TLS refused.
    case transport(url: String, reason: String)
    /// The response body is larger than the client accepts.
    case bodyTooLarge(url: String, limit: Int)
    /// The GLib loop the client runs on has stopped.
    case loopStopped

    public var description: String {
        switch self {
        case .invalidURL(let url):
            return "http: '\(redactedURL(url))' is not an http or https URL"
        case .timedOut(let url, let after):
            return "http: no answer from \(redactedURL(url)) within \(after.secondsText)"
        case .cancelled(let url):
            return "http: the request to \(redactedURL(url)) was cancelled"
        case .transport(let url, let reason):
            return "http: could not reach \(redactedURL(url)): \(reason)"
        case .bodyTooLarge(let url, let limit):
            return "http: the response from \(redactedURL(url)) is larger than \(limit) bytes; refused"
        case .loopStopped:
            return "http: the GLib loop has stopped; no request can run"
        }
    }
}
