/// One message from a participant to the room server (docs/room-protocol.md, "Messages"), checked
/// field by field. The relayed kinds keep the whole object, so fields the server does not know
/// pass through unchanged.
public enum ClientMessage: Hashable, Sendable {
    case join(name: String, resume: String?)
    case leave
    case signal(to: String, kind: SignalKind, body: [String: JSONValue])
    case share(on: Bool, mid: String?, body: [String: JSONValue])
    case media(body: [String: JSONValue])

    /// `restart`: in a room on Janus, a sharer asks one viewer to start its subscription to the
    /// sharer's screen afresh (the watchdog's "rebuild" there); it carries nothing else.
    public enum SignalKind: String, Hashable, Sendable, CaseIterable {
        case offer, answer, candidate, restart
    }

    /// Names are counted in UTF-8 bytes: one character can carry any number of combining marks,
    /// and what the room writes about its participants (welcome, joined) must stay far below the
    /// frame limit. Resume keys, ids and mids are ASCII tokens, bounded in bytes.
    public static let maxNameBytes = 64
    public static let maxResumeCharacters = 128
    public static let maxIDCharacters = 32
    public static let maxMidCharacters = 32

    /// Parses one text frame. A failure says what is wrong in words a person can read.
    public static func parse(_ text: String) -> Result<ClientMessage, RoomMessageError> {
        guard let value = JSONValue.parse(text) else { return .failure(.notJSON) }
        guard case .object(let object) = value else { return .failure(.notAnObject) }
        guard let type = object["type"] else { return .failure(.missing(field: "type", in: nil)) }
        guard let typeName = type.stringValue else {
            return .failure(.wrongType(field: "type", in: nil, want: "a string"))
        }
        switch typeName {
        case "join": return parseJoin(object)
        case "leave": return .success(.leave)
        case "signal": return parseSignal(object)
        case "share": return parseShare(object)
        case "media": return parseMedia(object)
        default: return .failure(.unknownType(String(typeName.unicodeScalars.prefix(40))))
        }
    }

    private static func parseJoin(_ object: [String: JSONValue]) -> Result<ClientMessage, RoomMessageError> {
        guard let field = object["name"] else { return .failure(.missing(field: "name", in: "join")) }
        guard let raw = field.stringValue else {
            return .failure(.wrongType(field: "name", in: "join", want: "a string"))
        }
        let name = raw.trimmingWhitespace
        guard !name.isEmpty else { return .failure(.invalid(field: "name", in: "join", why: "it is empty")) }
        guard name.utf8.count <= maxNameBytes else {
            return .failure(
                .invalid(field: "name", in: "join", why: "it is longer than \(maxNameBytes) bytes in UTF-8"))
        }
        let categories = name.unicodeScalars.map(\.properties.generalCategory)
        guard !categories.contains(where: { [.control, .lineSeparator, .paragraphSeparator].contains($0) }) else {
            return .failure(.invalid(field: "name", in: "join", why: "it holds control characters"))
        }
        // Bidi overrides and isolates, zero-width characters: they make a name read as another.
        guard !categories.contains(.format) else {
            return .failure(
                .invalid(
                    field: "name", in: "join", why: "it holds invisible formatting characters (bidi or zero-width)"))
        }
        var resume: String?
        switch object["resume"] {
        case nil, .null?: break
        case .string(let key)?:
            guard key.utf8.count <= maxResumeCharacters else {
                return .failure(
                    .invalid(field: "resume", in: "join", why: "it is longer than \(maxResumeCharacters) characters"))
            }
            resume = key.isEmpty ? nil : key
        default: return .failure(.wrongType(field: "resume", in: "join", want: "a string"))
        }
        return .success(.join(name: name, resume: resume))
    }

    private static func parseSignal(_ object: [String: JSONValue]) -> Result<ClientMessage, RoomMessageError> {
        guard let to = object["to"] else { return .failure(.missing(field: "to", in: "signal")) }
        guard let target = to.stringValue, !target.isEmpty, target.utf8.count <= maxIDCharacters else {
            return .failure(.wrongType(field: "to", in: "signal", want: "a participant id such as \"p1\""))
        }
        guard let kindField = object["kind"] else { return .failure(.missing(field: "kind", in: "signal")) }
        guard let kindName = kindField.stringValue, let kind = SignalKind(rawValue: kindName) else {
            return .failure(
                .wrongType(field: "kind", in: "signal", want: "\"offer\", \"answer\", \"candidate\" or \"restart\""))
        }
        switch kind {
        case .offer, .answer:
            guard let sdp = object["sdp"] else {
                return .failure(.missing(field: "sdp", in: "signal \(kind.rawValue)"))
            }
            guard let text = sdp.stringValue, !text.isEmpty else {
                return .failure(.wrongType(field: "sdp", in: "signal \(kind.rawValue)", want: "a non-empty string"))
            }
        case .candidate:
            guard let candidate = object["candidate"] else {
                return .failure(.missing(field: "candidate", in: "signal candidate"))
            }
            guard candidate.stringValue != nil else {
                return .failure(
                    .wrongType(field: "candidate", in: "signal candidate", want: "a string (empty: end of candidates)"))
            }
        case .restart:
            break
        }
        if let mid = object["mid"], mid != .null {
            guard let text = mid.stringValue, text.utf8.count <= maxMidCharacters else {
                return .failure(.wrongType(field: "mid", in: "signal", want: "a short string"))
            }
        }
        return .success(.signal(to: target, kind: kind, body: object))
    }

    private static func parseShare(_ object: [String: JSONValue]) -> Result<ClientMessage, RoomMessageError> {
        guard let on = object["on"] else { return .failure(.missing(field: "on", in: "share")) }
        guard let isOn = on.boolValue else {
            return .failure(.wrongType(field: "on", in: "share", want: "true or false"))
        }
        var mid: String?
        if let field = object["mid"], field != .null {
            guard let text = field.stringValue, text.utf8.count <= maxMidCharacters else {
                return .failure(.wrongType(field: "mid", in: "share", want: "a short string"))
            }
            mid = text
        }
        return .success(.share(on: isOn, mid: isOn ? mid : nil, body: object))
    }

    private static func parseMedia(_ object: [String: JSONValue]) -> Result<ClientMessage, RoomMessageError> {
        if let screens = object["screens"], screens != .null {
            guard let list = screens.arrayValue else {
                return .failure(.wrongType(field: "screens", in: "media", want: "an array"))
            }
            for entry in list {
                guard let report = entry.objectValue, report["from"]?.stringValue != nil else {
                    return .failure(.wrongType(field: "screens[]", in: "media", want: "objects with a \"from\" id"))
                }
                if let frames = report["framesDecoded"], !frames.isNumber {
                    return .failure(.wrongType(field: "screens[].framesDecoded", in: "media", want: "a number"))
                }
                if let stalled = report["screenStalled"], stalled.boolValue == nil {
                    return .failure(.wrongType(field: "screens[].screenStalled", in: "media", want: "true or false"))
                }
            }
        }
        if let cameras = object["cameras"], cameras != .null {
            guard let list = cameras.arrayValue,
                list.allSatisfy({ $0.objectValue?["from"]?.stringValue != nil })
            else {
                return .failure(
                    .wrongType(field: "cameras", in: "media", want: "an array of objects with a \"from\" id"))
            }
        }
        for field in ["hearing", "noSoundFrom"] {
            if let ids = object[field], ids != .null {
                guard let list = ids.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                    return .failure(.wrongType(field: field, in: "media", want: "an array of participant ids"))
                }
            }
        }
        if let muted = object["muted"], muted != .null, muted.boolValue == nil {
            return .failure(.wrongType(field: "muted", in: "media", want: "true or false"))
        }
        return .success(.media(body: object))
    }
}

/// Why a message was refused; `description` is what the `error` message to its sender says.
public enum RoomMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    case notJSON
    case notAnObject
    case binary
    case unknownType(String)
    case missing(field: String, in: String?)
    case wrongType(field: String, in: String?, want: String)
    case invalid(field: String, in: String?, why: String)

    public var description: String {
        func place(_ kind: String?) -> String { kind.map { " of \($0)" } ?? "" }
        switch self {
        case .notJSON: return "the message is not JSON"
        case .notAnObject: return "the message is not a JSON object"
        case .binary: return "binary frames are not part of the protocol; send JSON text"
        case .unknownType(let type): return "unknown message type \"\(type)\""
        case .missing(let field, let kind): return "the field \"\(field)\"\(place(kind)) is missing"
        case .wrongType(let field, let kind, let want): return "the field \"\(field)\"\(place(kind)) must be \(want)"
        case .invalid(let field, let kind, let why): return "the field \"\(field)\"\(place(kind)) is refused: \(why)"
        }
    }
}

extension String {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
