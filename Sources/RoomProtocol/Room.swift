/// A server-given number for one WebSocket connection (not a participant: a participant that
/// resumes comes back on a new connection).
public typealias ConnectionID = Int

/// What a room, and the server around it, allows (docs/room-protocol.md, "Limits").
public struct RoomLimits: Hashable, Sendable {
    /// How long a participant whose connection dropped keeps its place.
    public var grace: Duration = .seconds(15)
    /// A text frame over this closes its connection (1009); no relayed message is sent larger.
    public var maxFrameBytes = 256 * 1024
    /// More messages than this in one second from one connection close it (1008).
    public var maxMessagesPerSecond = 200
    /// Share messages (on, off, another mid) one participant may send in one second; more are
    /// refused with an error and change nothing.
    public var maxShareMessagesPerSecond = 4
    /// Messages kept for an absent participant; past this, or past `maxQueuedBytes`, it loses its place.
    public var maxQueued = 1000
    public var maxQueuedBytes = 2 * 1024 * 1024
    public var maxParticipants = 32
    /// A connection that has not joined within this long is closed (1008).
    public var joinTimeout: Duration = .seconds(10)

    // The server's own limits, around the rooms.
    /// Output queued for one WebSocket and not yet taken by its peer; past this the peer is not
    /// reading and its connection is closed.
    public var maxSocketOutputBytes = 4 * 1024 * 1024
    /// Open WebSockets from one remote address, over all rooms.
    public var maxSocketsPerAddress = 16
    /// Rooms one server holds.
    public var maxRooms = 64
    /// A request body over this (or any chunked one) is refused with 413 before it is read.
    public var maxRequestBodyBytes = 0
    /// Pings go out this often (whole seconds); a peer that has not answered one within
    /// `pongTimeout` of the next is closed.
    public var keepaliveInterval: Duration = .seconds(10)
    public var pongTimeout: Duration = .seconds(20)

    public init(grace: Duration = .seconds(15)) { self.grace = grace }
}

/// What the room asks its transport to do, in order.
public enum RoomOutput: Hashable, Sendable {
    case send(ConnectionID, String)
    case close(ConnectionID, code: UInt16, reason: String)
}

/// One participant as others see it, and as a state file keeps it.
public struct RoomParticipant: Hashable, Sendable, Codable {
    public let id: String
    public let number: Int
    public var name: String
    public var resumeKey: String
    public var sharing: Bool
    public var shareMid: String?

    var peerJSON: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "name": .string(name), "sharing": .bool(sharing)]
        if sharing, let shareMid { object["mid"] = .string(shareMid) }
        return .object(object)
    }
}

/// What outlives a server restart: the room's name, token, the participants (with their resume
/// keys) and the next id. Restored participants are all absent, each within a fresh grace period.
public struct RoomSnapshot: Hashable, Sendable, Codable {
    public var name: String
    public var token: String
    public var nextNumber: Int
    public var participants: [RoomParticipant]
}

/// One room's state machine: participants, their connections, resume within a grace period,
/// per-target ordered relay, messages queued for absent participants, size and rate limits.
/// A pure value: it reads no clock (`now` comes in) and touches no socket (it returns
/// `RoomOutput`s). The server runs it on its one loop thread.
public struct Room: Sendable {
    public let name: String
    public let token: String
    public let limits: RoomLimits
    /// Bumped whenever what a snapshot holds changes (who is in, names, sharing).
    public private(set) var revision = 0

    private var members: [Member] = []
    private var links: [ConnectionID: Link] = [:]
    private var nextNumber = 1
    private var secrets: SecretSource

    private struct Member: Sendable {
        var participant: RoomParticipant
        var connection: ConnectionID?
        var absentSince: ContinuousClock.Instant?
        var queue: [String] = []
        var queuedBytes = 0
        var shareMessages: RateWindow?
    }

    private struct Link: Sendable {
        var participantID: String?
        var joined = false
        var openedAt: ContinuousClock.Instant
        var messages: RateWindow
        var closing = false
    }

    /// Counts events in one-second windows: the first event opens a window, and a window a second
    /// old or more starts again at the next event.
    struct RateWindow: Sendable {
        var start: ContinuousClock.Instant
        var count = 0

        init(start: ContinuousClock.Instant) { self.start = start }

        /// Counts one event at `now`; false when it is over `limit` in its window.
        mutating func admit(now: ContinuousClock.Instant, limit: Int) -> Bool {
            if now - start >= .seconds(1) {
                start = now
                count = 0
            }
            count += 1
            return count <= limit
        }
    }

    public init(name: String, limits: RoomLimits = RoomLimits(), secrets: SecretSource = .system) {
        var secrets = secrets
        self.name = name
        self.token = secrets.next()
        self.limits = limits
        self.secrets = secrets
    }

    /// A room as a snapshot left it: every participant absent since `now`, keeping its place for
    /// the grace period so it can resume.
    public init(
        restoring snapshot: RoomSnapshot, limits: RoomLimits = RoomLimits(), secrets: SecretSource = .system,
        now: ContinuousClock.Instant
    ) {
        name = snapshot.name
        token = snapshot.token
        self.limits = limits
        self.secrets = secrets
        nextNumber = max(1, snapshot.nextNumber)
        members = snapshot.participants.map { Member(participant: $0, connection: nil, absentSince: now) }
        for member in members where member.participant.number >= nextNumber {
            nextNumber = member.participant.number + 1
        }
    }

    public var snapshot: RoomSnapshot {
        RoomSnapshot(name: name, token: token, nextNumber: nextNumber, participants: members.map(\.participant))
    }

    /// Everyone in the room, present or within their grace period, in joining order.
    public var participants: [RoomParticipant] { members.map(\.participant) }

    /// Ids of the participants whose connection is open now.
    public var presentIDs: [String] { members.filter { $0.connection != nil }.map(\.participant.id) }

    public func accepts(token candidate: String) -> Bool { SecretSource.equal(candidate, token) }

    // MARK: Connections

    /// A WebSocket was accepted for this room (its token already checked).
    public mutating func connected(_ connection: ConnectionID, now: ContinuousClock.Instant) {
        links[connection] = Link(participantID: nil, openedAt: now, messages: RateWindow(start: now))
    }

    /// A connection's WebSocket is gone (closed by either side, or dropped). Its participant keeps
    /// its place for the grace period.
    public mutating func disconnected(_ connection: ConnectionID, now: ContinuousClock.Instant) -> [RoomOutput] {
        guard let link = links.removeValue(forKey: connection) else { return [] }
        if let id = link.participantID, let index = index(of: id), members[index].connection == connection {
            members[index].connection = nil
            members[index].absentSince = now
        }
        return []
    }

    /// Participants absent for longer than the grace period leave; everyone else hears `left`.
    /// Connections that never joined are closed after `joinTimeout`.
    public mutating func tick(now: ContinuousClock.Instant) -> [RoomOutput] {
        var out: [RoomOutput] = []
        for (connection, link) in links.sorted(by: { $0.key < $1.key })
        where !link.joined && !link.closing && now - link.openedAt >= limits.joinTimeout {
            links[connection]?.closing = true
            out += [
                error(to: connection, code: "not-joined", "no join within \(limits.joinTimeout)"),
                .close(connection, code: 1008, reason: "no join")
            ]
        }
        let expired = members.filter { member in
            guard let since = member.absentSince else { return false }
            return now - since >= limits.grace
        }.map(\.participant.id)
        for id in expired { out += remove(id) }
        return out
    }

    /// A binary frame: not part of the protocol, answered with an error (or closed if too large).
    public mutating func receivedBinary(
        byteCount: Int, from connection: ConnectionID,
        now: ContinuousClock.Instant
    ) -> [RoomOutput] {
        if let refused = admit(byteCount: byteCount, from: connection, now: now) { return refused }
        return [error(to: connection, code: "bad-message", RoomMessageError.binary.description)]
    }

    /// One text frame from a connection.
    public mutating func received(_ text: String, from connection: ConnectionID, now: ContinuousClock.Instant)
        -> [RoomOutput]
    {
        if let refused = admit(byteCount: text.utf8.count, from: connection, now: now) { return refused }
        let message: ClientMessage
        switch ClientMessage.parse(text) {
        case .success(let parsed): message = parsed
        case .failure(let reason): return [error(to: connection, code: "bad-message", reason.description)]
        }
        if case .join(let name, let resume) = message { return join(connection, name: name, resume: resume, now: now) }
        guard let id = links[connection]?.participantID, let index = index(of: id) else {
            return [error(to: connection, code: "not-joined", "send join first")]
        }
        switch message {
        case .join: return []  // handled above
        case .leave:
            links[connection]?.participantID = nil
            links[connection]?.closing = true
            return remove(id) + [.close(connection, code: 1000, reason: "left")]
        case .signal(let to, _, let body):
            guard to != id, self.index(of: to) != nil else {
                return [error(to: connection, code: "unknown-peer", "no participant \"\(to.prefix(32))\" in this room")]
            }
            var relayed = body
            relayed["to"] = nil
            relayed["from"] = .string(id)
            let text = JSONValue.object(relayed).text
            if let refused = oversized(text, from: connection) { return refused }
            return deliver(text, to: to, queueing: true)
        case .share(let on, let mid, let body):
            var relayed = body
            relayed["from"] = .string(id)
            if !on { relayed["mid"] = nil }
            let text = JSONValue.object(relayed).text
            if let refused = oversized(text, from: connection) { return refused }
            // Each share message is told to everyone, and a change is written to the state file: a
            // few a second at most.
            var window = members[index].shareMessages ?? RateWindow(start: now)
            let admitted = window.admit(now: now, limit: limits.maxShareMessagesPerSecond)
            members[index].shareMessages = window
            guard admitted else {
                return [
                    error(
                        to: connection, code: "rate",
                        "more than \(limits.maxShareMessagesPerSecond) share messages in one second; this one is refused"
                    )
                ]
            }
            if members[index].participant.sharing != on || members[index].participant.shareMid != mid {
                members[index].participant.sharing = on
                members[index].participant.shareMid = mid
                revision += 1
            }
            return broadcast(text, except: id, queueing: true)
        case .media(let body):
            var relayed = body
            relayed["from"] = .string(id)
            let text = JSONValue.object(relayed).text
            if let refused = oversized(text, from: connection) { return refused }
            // Reports are about now: an absent participant gets fresh ones when it is back.
            return broadcast(text, except: id, queueing: false)
        }
    }

    /// A relayed message is never larger than a client accepts (`maxFrameBytes`), counted as it
    /// goes out, with the sender's id added: one at the limit coming in may not fit going out.
    private func oversized(_ text: String, from connection: ConnectionID) -> [RoomOutput]? {
        let size = text.utf8.count
        guard size > limits.maxFrameBytes else { return nil }
        return [
            error(
                to: connection, code: "too-large",
                "relayed with your id the message would be \(size) bytes, over the \(limits.maxFrameBytes)-byte limit")
        ]
    }

    // MARK: Steps

    /// Counts a frame against the connection's limits; returns the refusal when it breaks one.
    private mutating func admit(byteCount: Int, from connection: ConnectionID, now: ContinuousClock.Instant)
        -> [RoomOutput]?
    {
        guard var link = links[connection], !link.closing else { return [] }
        if byteCount > limits.maxFrameBytes {
            links[connection]?.closing = true
            return [
                error(
                    to: connection, code: "too-large",
                    "a message of \(byteCount) bytes is over the \(limits.maxFrameBytes)-byte limit"),
                .close(connection, code: 1009, reason: "message too large")
            ]
        }
        let admitted = link.messages.admit(now: now, limit: limits.maxMessagesPerSecond)
        links[connection] = link
        if !admitted {
            links[connection]?.closing = true
            return [
                error(to: connection, code: "rate", "more than \(limits.maxMessagesPerSecond) messages in one second"),
                .close(connection, code: 1008, reason: "too many messages")
            ]
        }
        return nil
    }

    private mutating func join(
        _ connection: ConnectionID, name: String, resume: String?,
        now: ContinuousClock.Instant
    ) -> [RoomOutput] {
        guard links[connection]?.participantID == nil else {
            return [error(to: connection, code: "bad-message", "this connection has already joined")]
        }
        var out: [RoomOutput] = []
        if let resume, let index = members.firstIndex(where: { SecretSource.equal($0.participant.resumeKey, resume) }) {
            // Resume: same id and place; nobody hears joined or left.
            if let old = members[index].connection {
                links[old]?.participantID = nil
                links[old]?.closing = true
                out.append(.close(old, code: 4000, reason: "resumed on another connection"))
            }
            members[index].connection = connection
            members[index].absentSince = nil
            links[connection]?.participantID = members[index].participant.id
            links[connection]?.joined = true
            let queued = members[index].queue
            members[index].queue = []
            members[index].queuedBytes = 0
            out.append(.send(connection, welcome(for: index)))
            out += queued.map { .send(connection, $0) }
            return out
        }
        guard members.count < limits.maxParticipants else {
            return [
                error(to: connection, code: "room-full", "the room already has \(limits.maxParticipants) participants"),
                .close(connection, code: 1008, reason: "room full")
            ]
        }
        let number = nextNumber
        nextNumber += 1
        let participant = RoomParticipant(
            id: "p\(number)", number: number, name: name, resumeKey: secrets.next(),
            sharing: false, shareMid: nil)
        members.append(Member(participant: participant, connection: connection, absentSince: nil))
        links[connection]?.participantID = participant.id
        links[connection]?.joined = true
        revision += 1
        out.append(.send(connection, welcome(for: members.count - 1)))
        let joined = JSONValue.object(["type": .string("joined"), "peer": participant.peerJSON]).text
        out += broadcast(joined, except: participant.id, queueing: true)
        return out
    }

    private func welcome(for index: Int) -> String {
        let me = members[index].participant
        let peers = members.filter { $0.participant.id != me.id }.map(\.participant.peerJSON)
        return JSONValue.object([
            "type": .string("welcome"), "id": .string(me.id), "name": .string(me.name),
            "resume": .string(me.resumeKey), "peers": .array(peers)
        ]).text
    }

    /// Takes a participant out and tells everyone else.
    private mutating func remove(_ id: String) -> [RoomOutput] {
        guard let index = index(of: id) else { return [] }
        let member = members.remove(at: index)
        revision += 1
        if let connection = member.connection { links[connection]?.participantID = nil }
        let left = JSONValue.object(["type": .string("left"), "id": .string(id)]).text
        return broadcast(left, except: id, queueing: true)
    }

    private mutating func broadcast(_ text: String, except sender: String, queueing: Bool) -> [RoomOutput] {
        var out: [RoomOutput] = []
        for id in members.map(\.participant.id) where id != sender {
            out += deliver(text, to: id, queueing: queueing)
        }
        return out
    }

    /// Sends to a present participant, or keeps the message for an absent one (in order). An absent
    /// participant whose queue overflows (in messages or in bytes) is too far behind to catch up: it leaves.
    private mutating func deliver(_ text: String, to id: String, queueing: Bool) -> [RoomOutput] {
        guard let index = index(of: id) else { return [] }
        if let connection = members[index].connection { return [.send(connection, text)] }
        guard queueing else { return [] }
        members[index].queue.append(text)
        members[index].queuedBytes += text.utf8.count
        if members[index].queue.count > limits.maxQueued || members[index].queuedBytes > limits.maxQueuedBytes {
            return remove(id)
        }
        return []
    }

    private func index(of id: String) -> Int? { members.firstIndex { $0.participant.id == id } }

    private func error(to connection: ConnectionID, code: String, _ message: String) -> RoomOutput {
        .send(
            connection,
            JSONValue.object(["type": .string("error"), "code": .string(code), "message": .string(message)]).text)
    }
}
