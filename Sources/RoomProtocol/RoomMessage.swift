import Foundation
import ShareCore

/// The room signalling protocol's messages (docs/room-protocol.md) as values: `parse` reads a
/// text frame, `text` writes one. Unknown fields are ignored; a frame that is not a JSON object,
/// has no known `type`, or misses a required field is refused with a readable reason.
public enum RoomMessage: Sendable, Equatable {
    public struct Peer: Sendable, Equatable {
        public var id: String
        public var name: String
        public var sharing: Bool
        /// The mid of the screen it shares, when the server knows it.
        public var mid: String?
        public init(id: String, name: String, sharing: Bool = false, mid: String? = nil) {
            self.id = id
            self.name = name
            self.sharing = sharing
            self.mid = mid
        }
    }

    /// `restart`: a sharer in a room on Janus asks a viewer to subscribe to its screen afresh.
    public enum SignalKind: String, Sendable, Equatable { case offer, answer, candidate, restart }

    /// One signalling message between two participants: `peer` is `to` going out, `from` coming in.
    public struct Signal: Sendable, Equatable {
        public var peer: String
        public var kind: SignalKind
        public var sdp: String?
        public var candidate: String?
        public var mid: String?
        public init(peer: String, kind: SignalKind, sdp: String? = nil, candidate: String? = nil, mid: String? = nil) {
            self.peer = peer
            self.kind = kind
            self.sdp = sdp
            self.candidate = candidate
            self.mid = mid
        }
    }

    /// A media report: what one participant decodes of the others.
    public struct Media: Sendable, Equatable {
        public struct Screen: Sendable, Equatable {
            public var from: String
            public var framesDecoded: Int
            public var screenStalled: Bool
            public init(from: String, framesDecoded: Int, screenStalled: Bool) {
                self.from = from
                self.framesDecoded = framesDecoded
                self.screenStalled = screenStalled
            }
        }
        public struct Camera: Sendable, Equatable {
            public var from: String
            public var framesDecoded: Int
            public init(from: String, framesDecoded: Int) {
                self.from = from
                self.framesDecoded = framesDecoded
            }
        }
        /// Who sent the report (incoming only).
        public var from: String?
        public var screens: [Screen]
        /// Whose audio path to the sender is established.
        public var hearing: [String]
        public var cameras: [Camera]
        /// The sender's microphone is muted (nobody is told "No sound from" about them).
        public var muted: Bool
        /// Whom the sender gets no sound from: their audio decodes, unmuted, under −85 dBFS for 5 s.
        public var noSoundFrom: [String]
        public init(
            from: String? = nil, screens: [Screen] = [], hearing: [String] = [], cameras: [Camera] = [],
            muted: Bool = false, noSoundFrom: [String] = []
        ) {
            self.from = from
            self.screens = screens
            self.hearing = hearing
            self.cameras = cameras
            self.muted = muted
            self.noSoundFrom = noSoundFrom
        }
    }

    case join(name: String, resume: String?)
    case welcome(id: String, resume: String, peers: [Peer])
    case joined(Peer)
    case left(id: String)
    case leave
    case signal(Signal)
    /// `from` is nil going out.
    case share(from: String?, on: Bool, mid: String?)
    case media(Media)
    case error(code: String, message: String)

    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        public let description: String
    }

    // MARK: Reading

    public static func parse(_ text: String) throws(Failure) -> RoomMessage {
        guard let data = text.data(using: .utf8), let any = try? JSONSerialization.jsonObject(with: data),
            let object = any as? [String: Any]
        else {
            throw Failure(description: "room: a message that is not a JSON object")
        }
        guard let type = object["type"] as? String else { throw Failure(description: "room: a message without a type") }
        func string(_ key: String) throws(Failure) -> String {
            guard let value = object[key] as? String else {
                throw Failure(description: "room: '\(type)' without '\(key)'")
            }
            return value
        }
        switch type {
        case "join": return .join(name: try string("name"), resume: object["resume"] as? String)
        case "welcome":
            guard let list = object["peers"] as? [Any] else {
                throw Failure(description: "room: 'welcome' without 'peers'")
            }
            var peers: [Peer] = []
            for entry in list {
                guard let peer = entry as? [String: Any] else {
                    throw Failure(description: "room: a peer that is not an object")
                }
                peers.append(try Self.peer(peer))
            }
            return .welcome(id: try string("id"), resume: try string("resume"), peers: peers)
        case "joined":
            guard let peer = object["peer"] as? [String: Any] else {
                throw Failure(description: "room: 'joined' without 'peer'")
            }
            return .joined(try Self.peer(peer))
        case "left": return .left(id: try string("id"))
        case "leave": return .leave
        case "signal":
            guard let kind = SignalKind(rawValue: try string("kind")) else {
                throw Failure(description: "room: a signal of unknown kind '\(object["kind"] ?? "")'")
            }
            guard let peer = (object["from"] as? String) ?? (object["to"] as? String) else {
                throw Failure(description: "room: a signal with neither 'from' nor 'to'")
            }
            let signal = Signal(
                peer: peer, kind: kind, sdp: object["sdp"] as? String, candidate: object["candidate"] as? String,
                mid: object["mid"] as? String)
            if kind == .offer || kind == .answer, signal.sdp == nil {
                throw Failure(description: "room: an \(kind.rawValue) without 'sdp'")
            }
            if kind == .candidate, signal.candidate == nil {
                throw Failure(description: "room: a candidate without 'candidate'")
            }
            return .signal(signal)
        case "share":
            guard let on = object["on"] as? Bool else { throw Failure(description: "room: 'share' without 'on'") }
            return .share(from: object["from"] as? String, on: on, mid: object["mid"] as? String)
        case "media":
            var media = Media(from: object["from"] as? String)
            for entry in object["screens"] as? [[String: Any]] ?? [] {
                guard let from = entry["from"] as? String else { continue }
                media.screens.append(
                    .init(
                        from: from, framesDecoded: (entry["framesDecoded"] as? NSNumber)?.intValue ?? 0,
                        screenStalled: entry["screenStalled"] as? Bool ?? false))
            }
            media.hearing = object["hearing"] as? [String] ?? []
            media.muted = object["muted"] as? Bool ?? false
            media.noSoundFrom = object["noSoundFrom"] as? [String] ?? []
            for entry in object["cameras"] as? [[String: Any]] ?? [] {
                guard let from = entry["from"] as? String else { continue }
                media.cameras.append(
                    .init(from: from, framesDecoded: (entry["framesDecoded"] as? NSNumber)?.intValue ?? 0))
            }
            return .media(media)
        case "error": return .error(code: try string("code"), message: object["message"] as? String ?? "")
        default: throw Failure(description: "room: unknown message type '\(type)'")
        }
    }

    private static func peer(_ object: [String: Any]) throws(Failure) -> Peer {
        guard let id = object["id"] as? String else { throw Failure(description: "room: a peer without 'id'") }
        return Peer(
            id: id, name: object["name"] as? String ?? id, sharing: object["sharing"] as? Bool ?? false,
            mid: object["mid"] as? String)
    }

    // MARK: Writing

    /// The message as one JSON text frame (what a client sends: `to` for signals).
    public var text: String {
        var object: [String: Any]
        switch self {
        case .join(let name, let resume):
            object = ["type": "join", "name": name]
            if let resume { object["resume"] = resume }
        case .welcome(let id, let resume, let peers):
            object = ["type": "welcome", "id": id, "resume": resume, "peers": peers.map(Self.object)]
        case .joined(let peer): object = ["type": "joined", "peer": Self.object(peer)]
        case .left(let id): object = ["type": "left", "id": id]
        case .leave: object = ["type": "leave"]
        case .signal(let signal):
            object = ["type": "signal", "to": signal.peer, "kind": signal.kind.rawValue]
            if let sdp = signal.sdp { object["sdp"] = sdp }
            if let candidate = signal.candidate { object["candidate"] = candidate }
            if let mid = signal.mid { object["mid"] = mid }
        case .share(let from, let on, let mid):
            object = ["type": "share", "on": on]
            if let from { object["from"] = from }
            if let mid { object["mid"] = mid }
        case .media(let media):
            object = [
                "type": "media",
                "screens": media.screens.map {
                    ["from": $0.from, "framesDecoded": $0.framesDecoded, "screenStalled": $0.screenStalled]
                },
                "hearing": media.hearing,
                "cameras": media.cameras.map { ["from": $0.from, "framesDecoded": $0.framesDecoded] },
                "muted": media.muted,
                "noSoundFrom": media.noSoundFrom
            ]
            if let from = media.from { object["from"] = from }
        case .error(let code, let message): object = ["type": "error", "code": code, "message": message]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static func object(_ peer: Peer) -> [String: Any] {
        var object: [String: Any] = ["id": peer.id, "name": peer.name, "sharing": peer.sharing]
        if let mid = peer.mid { object["mid"] = mid }
        return object
    }
}
