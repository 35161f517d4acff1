// Janus's JSON API (janus.plugin.videoroom), the messages a publisher sends and reads, as values:
//
//   → {"janus":"create"}                                      ← success, data.id = the session
//   → {"janus":"attach","plugin":"janus.plugin.videoroom"}    ← success, data.id = the handle
//   → message {"request":"join","ptype":"publisher",…}        ← ack, then event "joined"
//   → message {"request":"publish"} + jsep offer              ← ack, then event + jsep answer
//   → {"janus":"keepalive"} every 25 s                        ← ack (the session lives 60 s)
//   → message {"request":"leave"}, {"janus":"hangup"} (← event hangup), then {"janus":"destroy"}
//
// Every request carries a transaction; Janus answers a plugin message with an ack at once and its
// event later under the same transaction. Events without one (webrtcup, media, slowlink, hangup,
// detached, timeout) concern the session or the handle.
import Foundation
import RoomProtocol
import ShareCore

/// A room of a Janus VideoRoom: numeric (the default) or a string when the server runs with
/// `string_ids`.
public enum JanusRoom: Hashable, Sendable, CustomStringConvertible {
    case number(Int)
    case name(String)

    /// Digits are a number (as Janus's default rooms are); anything else a string id. Empty,
    /// over 128 characters or with control characters: nil.
    public init?(argument: String) {
        guard !argument.isEmpty, argument.count <= 128,
            !argument.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        if argument.allSatisfy(\.isASCII), let number = Int(argument), number > 0, String(number) == argument {
            self = .number(number)
        } else {
            self = .name(argument)
        }
    }

    var json: JSONValue {
        switch self {
        case .number(let n): .int(n)
        case .name(let s): .string(s)
        }
    }

    public var description: String {
        switch self {
        case .number(let n): String(n)
        case .name(let s): s
        }
    }
}

/// What a publisher sends (without transaction or ids, which `JanusRequest.text` adds).
public enum JanusRequest: Sendable, Equatable {
    case create
    case attach(plugin: String)
    case join(room: JanusRoom, pin: String?, display: String?)
    /// Publishes with the offer; every candidate is in it (`trickle: false`).
    case publish(offer: String)
    case leave
    /// Janus core's hangup of the handle's PeerConnection (Janus says `hangup` once it is closed).
    case hangup
    /// Subscribes to these publishers (Janus's multistream `join` as subscriber); Janus answers
    /// with its offer. `substream`: of a simulcast publisher's layers, this one (0 the smallest,
    /// 2 the largest; nil: the largest there is).
    case subscribe(room: JanusRoom, pin: String?, feeds: [Int], substream: Int? = nil)
    /// Starts a subscription with our answer.
    case start(answer: String)
    /// Asks for another simulcast layer of the subscribed stream `mid` (0 the smallest).
    case configure(mid: String, substream: Int)
    /// The room's participants, publishers among them (answered at once, as `success`).
    case listParticipants(room: JanusRoom)
    /// Makes a room (a room server's own, `serve --sfu janus`): Janus picks its number; `secret`
    /// guards its destruction, `pin` its joins; `adminKey` when the plugin is configured with one.
    case createRoom(description: String, secret: String, pin: String, publishers: Int, adminKey: String?)
    /// Ends a room made with `createRoom`.
    case destroyRoom(room: JanusRoom, secret: String)
    /// The plugin's rooms with their participant counts (answered at once, as `success`).
    case listRooms(adminKey: String?)
    case keepalive
    case destroy

    /// The JSON text of this request under `transaction`, for `session` and `handle` where it
    /// needs them.
    public func text(transaction: String, session: Int?, handle: Int?) -> String {
        var object: [String: JSONValue] = ["transaction": .string(transaction)]
        switch self {
        case .create:
            object["janus"] = .string("create")
        case .attach(let plugin):
            object["janus"] = .string("attach")
            object["plugin"] = .string(plugin)
        case .join(let room, let pin, let display):
            object["janus"] = .string("message")
            var body: [String: JSONValue] = [
                "request": .string("join"), "ptype": .string("publisher"), "room": room.json
            ]
            if let pin { body["pin"] = .string(pin) }
            if let display { body["display"] = .string(display) }
            object["body"] = .object(body)
        case .publish(let offer):
            object["janus"] = .string("message")
            object["body"] = .object(["request": .string("publish")])
            object["jsep"] = .object(["type": .string("offer"), "sdp": .string(offer), "trickle": .bool(false)])
        case .leave:
            object["janus"] = .string("message")
            object["body"] = .object(["request": .string("leave")])
        case .subscribe(let room, let pin, let feeds, let substream):
            object["janus"] = .string("message")
            var body: [String: JSONValue] = [
                "request": .string("join"), "ptype": .string("subscriber"), "room": room.json,
                "streams": .array(
                    feeds.map { feed in
                        .object(
                            ["feed": .int(feed)].merging(substream.map { ["substream": .int($0)] } ?? [:]) { a, _ in a }
                        )
                    })
            ]
            if let pin { body["pin"] = .string(pin) }
            object["body"] = .object(body)
        case .start(let answer):
            object["janus"] = .string("message")
            object["body"] = .object(["request": .string("start")])
            object["jsep"] = .object(["type": .string("answer"), "sdp": .string(answer), "trickle": .bool(false)])
        case .configure(let mid, let substream):
            object["janus"] = .string("message")
            object["body"] = .object([
                "request": .string("configure"),
                "streams": .array([.object(["mid": .string(mid), "substream": .int(substream)])])
            ])
        case .listParticipants(let room):
            object["janus"] = .string("message")
            object["body"] = .object(["request": .string("listparticipants"), "room": room.json])
        case .createRoom(let description, let secret, let pin, let publishers, let adminKey):
            object["janus"] = .string("message")
            var body: [String: JSONValue] = [
                "request": .string("create"), "description": .string(description), "secret": .string(secret),
                "pin": .string(pin), "publishers": .int(publishers), "videocodec": .string("h264,vp8"),
                "audiocodec": .string("opus"), "permanent": .bool(false), "notify_joining": .bool(true)
            ]
            if let adminKey { body["admin_key"] = .string(adminKey) }
            object["body"] = .object(body)
        case .destroyRoom(let room, let secret):
            object["janus"] = .string("message")
            object["body"] = .object([
                "request": .string("destroy"), "room": room.json, "secret": .string(secret), "permanent": .bool(false)
            ])
        case .listRooms(let adminKey):
            object["janus"] = .string("message")
            var body: [String: JSONValue] = ["request": .string("list")]
            if let adminKey { body["admin_key"] = .string(adminKey) }
            object["body"] = .object(body)
        case .hangup:
            object["janus"] = .string("hangup")
        case .keepalive:
            object["janus"] = .string("keepalive")
        case .destroy:
            object["janus"] = .string("destroy")
        }
        if self != .create, let session { object["session_id"] = .int(session) }
        switch self {
        case .join, .publish, .leave, .hangup, .subscribe, .start, .configure, .listParticipants, .createRoom,
            .destroyRoom, .listRooms:
            if let handle { object["handle_id"] = .int(handle) }
        case .create, .attach, .keepalive, .destroy: break
        }
        return JSONValue.object(object).text
    }
}

/// One message from Janus, read tolerantly: only `janus` is required; what a kind needs is checked
/// by whoever waits for it (`JanusPublisher`).
public struct JanusReply: Sendable, Equatable {
    /// success, error, ack, event, webrtcup, media, slowlink, hangup, detached, timeout, …
    public var kind: String
    public var transaction: String?
    public var sessionID: Int?
    /// The handle an event or a notice is about.
    public var sender: Int?
    /// `data.id` of a success: the new session's or handle's id.
    public var id: Int?
    /// A core error (`{"janus":"error","error":{"code","reason"}}`).
    public var error: JanusError?
    /// The plugin's data of an event (`plugindata.data`).
    public var pluginData: [String: JSONValue]?
    /// The JSEP of an event.
    public var jsep: JSEP?
    /// A hangup's reason, or a media/slowlink notice's words.
    public var reason: String?

    public struct JSEP: Sendable, Equatable {
        public var type: String
        public var sdp: String

        public init(type: String, sdp: String) {
            self.type = type
            self.sdp = sdp
        }
    }

    public init(kind: String) { self.kind = kind }

    /// The plugin's own error in an event (`error_code`, `error`), if it gave one.
    public var pluginError: JanusError? {
        guard let data = pluginData, let code = data["error_code"].flatMap(Self.integer) else { return nil }
        return JanusError(code: code, reason: escapedForLog(data["error"]?.stringValue ?? "no reason given"))
    }

    /// Reads one text frame. Anything that is not a JSON object with a string `janus` is
    /// refused with what it was; fields of the wrong type are left out.
    public static func parse(_ text: String) throws(JanusProtocolError) -> JanusReply {
        guard text.utf8.count <= 256 * 1024 else { throw .malformed("a message of \(text.utf8.count) bytes") }
        guard let value = JSONValue.parse(text), let object = value.objectValue else {
            throw .malformed("not a JSON object: \(Self.excerpt(text))")
        }
        guard let kind = object["janus"]?.stringValue, !kind.isEmpty else {
            throw .malformed("no \"janus\" kind: \(Self.excerpt(text))")
        }
        var reply = JanusReply(kind: kind)
        reply.transaction = object["transaction"]?.stringValue
        reply.sessionID = object["session_id"].flatMap(integer)
        reply.sender = object["sender"].flatMap(integer)
        reply.id = object["data"]?["id"].flatMap(integer)
        if let error = object["error"]?.objectValue {
            reply.error = JanusError(
                code: error["code"].flatMap(integer) ?? 0,
                reason: escapedForLog(error["reason"]?.stringValue ?? "no reason given"))
        }
        reply.pluginData = object["plugindata"]?["data"]?.objectValue
        if let jsep = object["jsep"]?.objectValue, let type = jsep["type"]?.stringValue,
            let sdp = jsep["sdp"]?.stringValue
        {
            reply.jsep = JSEP(type: type, sdp: sdp)
        }
        reply.reason = object["reason"]?.stringValue.map { escapedForLog($0) }
        return reply
    }

    /// An id or a code: an integer, or a double that is one (some JSON writers give 1234.0).
    public static func integer(_ value: JSONValue) -> Int? {
        switch value {
        case .int(let n): return n
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int(d)
        default: return nil
        }
    }

    static func excerpt(_ text: String) -> String {
        // One line: C0 controls read as spaces; the rest is the project's log escaping.
        let flat = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 ? " " : $0 }))
        return "'\(escapedForLog(flat, limit: 80))'"
    }
}

/// An error Janus or its plugin gave, with its code.
public struct JanusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(reason) (Janus error \(code))" }
}

/// A message Janus should not have sent.
public enum JanusProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)

    public var description: String {
        switch self {
        case .malformed(let what): "Janus sent a malformed message: \(what)"
        }
    }
}
