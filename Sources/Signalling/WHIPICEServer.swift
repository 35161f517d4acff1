// RFC 9725 §4.6 STUN/TURN server configuration, carried in Link header fields (RFC 8288 §3):
//
//   Link: <stun:stun.example.net>; rel="ice-server"
//   Link: <turn:turn.example.net?transport=udp>; rel="ice-server";
//         username="user"; credential="myPassword"; credential-type="password"
//
// A field may hold several comma-separated link-values; a quoted-string may hold commas and
// semicolons. URIs follow RFC 7064 (stun:) and RFC 7065 (turn:, turns:).

/// One STUN or TURN server offered by a WHIP endpoint.
public struct WHIPICEServer: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Hashable, Sendable {
        case stun, turn, turns
        var defaultPort: UInt16 { self == .turns ? 5349 : 3478 }
    }

    public enum Transport: String, Hashable, Sendable { case udp, tcp }

    /// The URI exactly as the server wrote it.
    public var uri: String
    public var scheme: Scheme
    /// A host name, IPv4 address or IPv6 address (without brackets).
    public var host: String
    public var port: UInt16
    /// The `?transport=` of a TURN URI; nil when not given (UDP for turn:, TCP for turns:).
    public var transport: Transport?
    public var username: String?
    public var credential: String?

    public init(
        uri: String, scheme: Scheme, host: String, port: UInt16, transport: Transport? = nil,
        username: String? = nil, credential: String? = nil
    ) {
        self.uri = uri
        self.scheme = scheme
        self.host = host
        self.port = port
        self.transport = transport
        self.username = username
        self.credential = credential
    }

    /// Never shows the credential.
    public var description: String {
        var text = uri
        if let username { text += " (username \(username))" }
        return text
    }

    /// The ICE servers in a response's `Link` fields (every value of every field), and a reason for
    /// each ice-server link that was left out. Links with another relation type are skipped silently.
    public static func parse(linkFields: [String]) -> (servers: [WHIPICEServer], skipped: [String]) {
        var servers: [WHIPICEServer] = []
        var skipped: [String] = []
        for field in linkFields {
            for link in LinkValue.parseAll(field) {
                let relations = (link.parameter("rel") ?? "").lowercased().split(separator: " ")
                guard relations.contains("ice-server") else { continue }
                switch server(from: link) {
                case .success(let server): servers.append(server)
                case .failure(let reason): skipped.append(reason.text)
                }
            }
        }
        return (servers, skipped)
    }

    private struct Skip: Error { let text: String }

    private static func server(from link: LinkValue) -> Result<WHIPICEServer, Skip> {
        if let type = link.parameter("credential-type"), type.lowercased() != "password" {
            return .failure(Skip(text: "\(link.target): credential-type \"\(type)\" is not supported (only password)"))
        }
        guard var server = parseURI(link.target) else {
            return .failure(Skip(text: "\(link.target): not a stun:, turn: or turns: URI"))
        }
        server.username = link.parameter("username")
        server.credential = link.parameter("credential")
        if server.scheme != .stun, server.username == nil || server.credential == nil {
            return .failure(Skip(text: "\(link.target): a TURN server needs a username and a credential"))
        }
        return .success(server)
    }

    /// `scheme:host[:port][?transport=udp|tcp]` (RFC 7064 §3.1, RFC 7065 §3.1).
    static func parseURI(_ uri: String) -> WHIPICEServer? {
        guard let colon = uri.firstIndex(of: ":"),
            let scheme = Scheme(rawValue: uri[..<colon].lowercased())
        else { return nil }
        var rest = Substring(uri[uri.index(after: colon)...])
        var transport: Transport?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = rest[..<question]
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "transport" else { return nil }
                guard let value = Transport(rawValue: parts[1].lowercased()) else { return nil }
                transport = value
            }
            if scheme == .stun, transport != nil { return nil }  // RFC 7064: stun: has no query
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard host.contains(":") else { return nil }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else { return nil }
        var port = scheme.defaultPort
        if let portText {
            guard let value = UInt16(portText), value > 0 else { return nil }
            port = value
        }
        return WHIPICEServer(uri: uri, scheme: scheme, host: String(host), port: port, transport: transport)
    }
}

/// One link-value of a Link field (RFC 8288 §3): `<target>; name=value; name="quoted"`.
struct LinkValue: Hashable, Sendable {
    var target: String
    /// Parameters in order, names lower-cased.
    var parameters: [(name: String, value: String)]

    /// The first occurrence of a parameter wins (RFC 8288 §3.3 for rel; the same rule for all here).
    func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }

    static func == (a: LinkValue, b: LinkValue) -> Bool {
        a.target == b.target && a.parameters.map(\.name) == b.parameters.map(\.name)
            && a.parameters.map(\.value) == b.parameters.map(\.value)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(target)
        for parameter in parameters {
            hasher.combine(parameter.name)
            hasher.combine(parameter.value)
        }
    }

    /// Every link-value in one field value. A malformed link-value is skipped up to the next comma
    /// outside quotes and angle brackets; the rest of the field is still read.
    static func parseAll(_ field: String) -> [LinkValue] {
        var scanner = Scanner(Array(field.unicodeScalars))
        var links: [LinkValue] = []
        while true {
            scanner.skip { $0 == " " || $0 == "\t" || $0 == "," }
            if scanner.atEnd { return links }
            if let link = scanner.linkValue() {
                links.append(link)
            } else {
                scanner.skipToNextLinkValue()
            }
        }
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0
        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var atEnd: Bool { index >= scalars.count }
        var current: Unicode.Scalar? { atEnd ? nil : scalars[index] }

        mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
            while let c = current, predicate(c) { index += 1 }
        }

        mutating func skipWhitespace() { skip { $0 == " " || $0 == "\t" } }

        mutating func take(while predicate: (Unicode.Scalar) -> Bool) -> String {
            var text = String.UnicodeScalarView()
            while let c = current, predicate(c) {
                text.append(c)
                index += 1
            }
            return String(text)
        }

        /// `<target> *( OWS ";" OWS link-param )`, stopping before a "," or the end.
        mutating func linkValue() -> LinkValue? {
            guard current == "<" else { return nil }
            index += 1
            let target = take { $0 != ">" }
            guard current == ">" else { return nil }
            index += 1
            var parameters: [(String, String)] = []
            while true {
                skipWhitespace()
                guard let c = current, c != "," else { return LinkValue(target: target, parameters: parameters) }
                guard c == ";" else { return nil }
                index += 1
                skipWhitespace()
                let name = take { Self.isTokenChar($0) }.lowercased()
                guard !name.isEmpty else { return nil }
                skipWhitespace()
                var value = ""
                if current == "=" {
                    index += 1
                    skipWhitespace()
                    if current == "\"" {
                        guard let quoted = quotedString() else { return nil }
                        value = quoted
                    } else {
                        value = take { Self.isTokenChar($0) }
                    }
                }
                parameters.append((name, value))
            }
        }

        /// RFC 9110 §5.6.4 quoted-string, with backslash escapes.
        mutating func quotedString() -> String? {
            index += 1  // opening quote
            var text = String.UnicodeScalarView()
            while let c = current {
                index += 1
                if c == "\"" { return String(text) }
                if c == "\\" {
                    guard let escaped = current else { return nil }
                    index += 1
                    text.append(escaped)
                } else {
                    text.append(c)
                }
            }
            return nil  // unterminated
        }

        mutating func skipToNextLinkValue() {
            var inQuotes = false
            var inAngles = false
            while let c = current {
                index += 1
                if inQuotes {
                    if c == "\\" { index += 1 } else if c == "\"" { inQuotes = false }
                } else if c == "\"" {
                    inQuotes = true
                } else if c == "<" {
                    inAngles = true
                } else if c == ">" {
                    inAngles = false
                } else if c == ",", !inAngles {
                    return
                }
            }
        }

        /// RFC 9110 §5.6.2 tchar.
        static func isTokenChar(_ c: Unicode.Scalar) -> Bool {
            switch c {
            case "a"..."z", "A"..."Z", "0"..."9": return true
            case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": return true
            default: return false
            }
        }
    }
}
