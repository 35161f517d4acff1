import Foundation
import GLibLoop
import RoomProtocol
import ShareCore
import Signalling

/// A sharectl participant's place in a room of `sharectl serve --sfu janus`. The media goes
/// through Janus; the room's own socket (`/ws/ROOM`) carries what the room does besides, as in a
/// mesh: the name, resume after a lost socket, share on and off, the media reports, and the
/// sharer's request that one viewer subscribe afresh (the watchdog's rebuild there).
///
/// A sharer announces its screen as `share` with the mid `janus:FEED` (its VideoRoom publisher
/// id), so a viewer knows whose screen a Janus feed is and reports it under that person's id.
///
/// An actor; the socket's events come in on a task of its own.
public actor JanusRoomPresence {
    /// Another participant as the room tells it.
    public struct Participant: Sendable, Equatable {
        public var id: String
        public var name: String
        /// The Janus feed of the screen it announced (nil: not sharing, or not through Janus).
        public var feed: Int?
        /// Its latest media report.
        public var report: RoomMessage.Media?
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The share's mid in a room on Janus: `janus:` and the VideoRoom publisher id.
    public static func mid(feed: Int) -> String { "janus:\(feed)" }
    public static func feed(mid: String?) -> Int? {
        guard let mid, mid.hasPrefix("janus:") else { return nil }
        return Int(mid.dropFirst(6))
    }

    private let url: String
    private let name: String
    private let loop: GLibLoop
    private let logger: Logger
    private var socket: RoomSocket?
    private var generation = 0
    private var resume: String?
    public private(set) var myID: String?
    private var participants: [String: Participant] = [:]
    /// What we announced, said again after a reconnect.
    private var sharing: Int?
    /// Who asked us to subscribe afresh, in order, not yet taken.
    private var restartRequests: [String] = []
    private var stopping = false
    private var welcomed: Latch?
    private var refusal: String?
    private var reconnecting = false

    /// `invite`: the room link (`http://HOST:PORT/r/ROOM?t=TOKEN`).
    public init(invite: String, name: String, loop: GLibLoop, logger: Logger) throws {
        do {
            url = try CallSession.socketURL(invite: invite)
        } catch {
            throw Failure(description: "\(error)")
        }
        self.name = name
        self.loop = loop
        self.logger = logger
    }

    /// Joins the room; returns once welcomed (at most 10 s), or throws the room's refusal.
    public func start() async throws {
        try await connect()
        guard let welcomed, await welcomed.wait(upTo: .seconds(10)), myID != nil else {
            throw Failure(description: "the room did not welcome us: \(refusal ?? "no answer within 10 s")")
        }
    }

    private func connect() async throws {
        let socket = try await RoomSocket.connect(loop: loop, url: url, logger: logger)
        generation += 1
        let mine = generation
        self.socket = socket
        welcomed = Latch()
        socket.send(RoomMessage.join(name: name, resume: resume).text)
        Task { [weak self] in
            for await event in socket.events {
                guard let self else { return }
                await self.handle(event, generation: mine)
            }
        }
    }

    private func handle(_ event: RoomSocket.Event, generation mine: Int) async {
        guard mine == generation else { return }
        switch event {
        case .text(let text):
            let message: RoomMessage
            do {
                message = try RoomMessage.parse(text)
            } catch {
                logger.warning("\(error)")
                return
            }
            received(message)
        case .closed(let reason):
            socket = nil
            guard !stopping else { return }
            logger.notice("room: the room's socket ended (\(reason)); joining again with the resume key")
            reconnect()
        }
    }

    private func received(_ message: RoomMessage) {
        switch message {
        case .welcome(let id, let resume, let peers):
            let again = myID == id
            myID = id
            self.resume = resume
            participants = [:]
            for peer in peers {
                participants[peer.id] = Participant(
                    id: peer.id, name: peer.name, feed: peer.sharing ? Self.feed(mid: peer.mid) : nil)
            }
            logger.info("room: \(again ? "joined again" : "joined") as \(id) with \(peers.count) others")
            if let feed = sharing {
                socket?.send(RoomMessage.share(from: nil, on: true, mid: Self.mid(feed: feed)).text)
            }
            welcomed?.open()
        case .joined(let peer):
            participants[peer.id] = Participant(
                id: peer.id, name: peer.name, feed: peer.sharing ? Self.feed(mid: peer.mid) : nil)
        case .left(let id):
            participants[id] = nil
        case .share(let from, let on, let mid):
            guard let from else { return }
            participants[from]?.feed = on ? Self.feed(mid: mid) : nil
        case .media(let media):
            guard let from = media.from else { return }
            participants[from]?.report = media
        case .signal(let signal):
            if signal.kind == .restart, participants[signal.peer] != nil { restartRequests.append(signal.peer) }
        case .error(let code, let text):
            logger.warning("room: \(code): \(text)")
            if myID == nil {
                refusal = "\(code): \(text)"
                welcomed?.open()
            }
        case .join, .leave:
            break
        }
    }

    private func reconnect() {
        guard !reconnecting, !stopping else { return }
        reconnecting = true
        Task { [weak self] in
            var wait = Duration.milliseconds(250)
            while let self, await !self.isStopping {
                try? await Task.sleep(for: wait)
                if await self.tryConnect() { break }
                wait = min(wait * 2, .seconds(5))
            }
            await self?.reconnected()
        }
    }

    private var isStopping: Bool { stopping }
    private func reconnected() { reconnecting = false }

    private func tryConnect() async -> Bool {
        do {
            try await connect()
            return true
        } catch {
            logger.info("room: joining again failed: \(error)")
            return false
        }
    }

    /// Announces our screen as the Janus feed `feed` (nil: the screen is no longer shared).
    public func announce(feed: Int?) {
        sharing = feed
        socket?.send(RoomMessage.share(from: nil, on: feed != nil, mid: feed.map(Self.mid(feed:))).text)
    }

    /// Sends a media report (dropped while the socket is down: reports are not worth keeping).
    public func report(_ media: RoomMessage.Media) {
        guard myID != nil else { return }
        socket?.send(RoomMessage.media(media).text)
    }

    /// Asks `id` to subscribe to our screen afresh.
    public func requestRestart(of id: String) {
        socket?.send(RoomMessage.signal(.init(peer: id, kind: .restart)).text)
    }

    /// The ids that asked us to subscribe afresh since the last call.
    public func takeRestartRequests() -> [String] {
        defer { restartRequests = [] }
        return restartRequests
    }

    public var others: [Participant] { participants.values.sorted { $0.id < $1.id } }

    /// Who announced the Janus feed `feed`.
    public func sharer(ofFeed feed: Int) -> Participant? {
        participants.values.first { $0.feed == feed }
    }

    /// Leaves the room (at most 2 s) and closes the socket.
    public func leave() async {
        stopping = true
        guard let socket else { return }
        self.socket = nil
        _ = await socket.sendLast(RoomMessage.leave.text, waitingForCloseUpTo: .seconds(2))
    }
}
