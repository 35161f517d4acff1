/// What a room server on Janus (`sharectl serve --sfu janus`) lets through from a participant's
/// WebSocket to the Janus behind the room: the messages a VideoRoom publisher and subscriber need,
/// in this room only. Everything else (making, changing or ending rooms, listing them, forwarding
/// RTP elsewhere, other plugins) is answered here with a Janus-shaped error under the message's
/// transaction, so janus.js and sharectl read it as Janus's own refusal.
public struct JanusProxyRule: Sendable, Equatable {
    public enum Verdict: Sendable, Equatable {
        case forward
        /// Refused; `answer` is the error to send back (under the message's transaction).
        case refuse(reason: String, answer: String)
    }

    /// The room's VideoRoom number.
    public let room: Int
    public let maxBytes: Int

    /// Janus core messages a participant sends.
    static let kinds: Set<String> = [
        "create", "attach", "message", "trickle", "keepalive", "detach", "hangup", "destroy"
    ]
    /// VideoRoom requests of a publisher and a subscriber.
    static let requests: Set<String> = [
        "join", "joinandconfigure", "configure", "publish", "unpublish", "start", "pause", "switch", "leave",
        "listparticipants", "update", "subscribe", "unsubscribe"
    ]

    public init(room: Int, maxBytes: Int = 256 * 1024) {
        self.room = room
        self.maxBytes = maxBytes
    }

    public func judge(_ text: String) -> Verdict {
        guard text.utf8.count <= maxBytes else {
            return refuse(nil, "a message of \(text.utf8.count) bytes (at most \(maxBytes))")
        }
        guard let message = JSONValue.parse(text)?.objectValue else { return refuse(nil, "not a JSON object") }
        let transaction = message["transaction"]?.stringValue
        guard let kind = message["janus"]?.stringValue else { return refuse(transaction, "no \"janus\" kind") }
        guard Self.kinds.contains(kind) else {
            return refuse(transaction, "'\(Self.excerpt(kind))' is not sent to this room's Janus")
        }
        switch kind {
        case "attach":
            guard message["plugin"]?.stringValue == "janus.plugin.videoroom" else {
                return refuse(transaction, "only janus.plugin.videoroom may be attached here")
            }
        case "message":
            guard let body = message["body"]?.objectValue, let request = body["request"]?.stringValue else {
                return refuse(transaction, "a message without a body and its request")
            }
            guard Self.requests.contains(request) else {
                return refuse(transaction, "the VideoRoom request '\(Self.excerpt(request))' is not allowed here")
            }
            if let named = body["room"] {
                guard Self.number(named) == room else { return refuse(transaction, "another room is not reached here") }
            }
        default:
            break
        }
        return .forward
    }

    private func refuse(_ transaction: String?, _ reason: String) -> Verdict {
        var error: [String: JSONValue] = [
            "janus": .string("error"),
            "error": .object(["code": .int(403), "reason": .string("refused by the room server: \(reason)")])
        ]
        if let transaction { error["transaction"] = .string(transaction) }
        return .refuse(reason: reason, answer: JSONValue.object(error).text)
    }

    static func number(_ value: JSONValue) -> Int? {
        switch value {
        case .int(let n): n
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: Int(d)
        default: nil
        }
    }

    static func excerpt(_ text: String) -> String {
        String(text.unicodeScalars.prefix(40).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
    }
}
