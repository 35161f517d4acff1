import Foundation
import GLibLoop
import ShareCore

/// Where in Janus: its WebSocket, a VideoRoom, the room's pin, our name there.
public struct JanusTarget: Sendable, Equatable {
    /// `ws://HOST:PORT` (or `wss://`) of Janus's WebSocket transport.
    public var url: String
    public var room: JanusRoom
    public var pin: String?
    /// The name others see.
    public var display: String?

    public init(url: String, room: JanusRoom, pin: String? = nil, display: String? = nil) {
        self.url = url
        self.room = room
        self.pin = pin
        self.display = display
    }
}

/// One publisher in an existing Janus VideoRoom: a session, a VideoRoom handle, a `join` as
/// publisher (with the room's pin and a display name), and a `publish` whose answer it returns.
/// Media is not this type's concern: it takes an offer and returns the answer, as `WHIPClient`
/// does. `stop()` leaves the room and destroys the session.
public actor JanusPublisher {
    public typealias Failure = JanusSession.Failure

    public let target: JanusTarget
    private let session: JanusSession
    private let logger: Logger
    private var handle: Int?
    /// This publisher's id in the room, once joined.
    public private(set) var publisherID: Int?

    public init(target: JanusTarget, loop: GLibLoop, logger: Logger = .disabled, timeout: Duration = .seconds(10))
        throws(Failure)
    {
        self.target = target
        self.logger = logger
        session = try JanusSession(url: target.url, loop: loop, logger: logger, timeout: timeout)
    }

    /// Why Janus ended the publisher (nil while it stands).
    public func ended() async -> String? {
        guard let handle else { return nil }
        return await session.ended(handle: handle)
    }

    /// Joins the room as a publisher and publishes `offer`; returns Janus's answer. On a failure,
    /// what was made on Janus's side (the session) is destroyed again.
    public func publish(offer: String) async throws(Failure) -> String {
        do {
            return try await joinAndPublish(offer: offer)
        } catch {
            await session.close()
            throw error
        }
    }

    private func joinAndPublish(offer: String) async throws(Failure) -> String {
        let place = "Janus at \(redactedURL(target.url))"
        try await session.open()
        let handle = try await session.attach()
        self.handle = handle
        let joined = try await session.send(
            .join(room: target.room, pin: target.pin, display: target.display), on: handle,
            what: "joining room \(target.room)")
        guard joined.pluginData?["videoroom"]?.stringValue == "joined" else {
            throw Failure(
                description: "\(place): joining room \(target.room): an unexpected reply "
                    + "(\(joined.pluginData?["videoroom"]?.stringValue ?? joined.kind))")
        }
        publisherID = joined.pluginData?["id"].flatMap(JanusReply.integer)
        let published = try await session.send(.publish(offer: offer), on: handle, what: "publishing")
        guard let jsep = published.jsep, jsep.type == "answer" else {
            throw Failure(description: "\(place): publishing: its reply carries no SDP answer")
        }
        return jsep.sdp
    }

    /// Leaves the room, waits for Janus to hang the PeerConnection up, and destroys the session
    /// (each at most 2 s), and says whether Janus
    /// answered both (a share that Janus did not see leave stays listed until its session times
    /// out, 60 s later).
    public func stop() async {
        let left = if let handle { await session.leave(on: handle) } else { false }
        let destroyed = await session.close()
        let room = "room \(target.room) of Janus at \(redactedURL(target.url))"
        if left && destroyed {
            logger.notice("left \(room): Janus answered the leave and destroyed the session")
        } else {
            logger.warning(
                "leaving \(room): Janus answered \(left ? "the leave but not the destroy" : destroyed ? "the destroy but not the leave" : "neither the leave nor the destroy")"
            )
        }
    }
}

/// One subscription to a publisher of an existing Janus VideoRoom: waits for a publisher (the
/// first one, or the one with `display`), subscribes, and returns Janus's offer; `start(answer:)`
/// completes it. `stop()` leaves and destroys the session.
public actor JanusSubscriber {
    public typealias Failure = JanusSession.Failure

    /// A publisher of the room.
    public struct Publisher: Sendable, Equatable {
        public var id: Int
        public var display: String?
    }

    public let target: JanusTarget
    private let session: JanusSession
    private var handle: Int?
    public private(set) var publisher: Publisher?

    public init(target: JanusTarget, loop: GLibLoop, logger: Logger = .disabled, timeout: Duration = .seconds(10))
        throws(Failure)
    {
        self.target = target
        session = try JanusSession(url: target.url, loop: loop, logger: logger, timeout: timeout)
    }

    public func ended() async -> String? {
        guard let handle else { return nil }
        return await session.ended(handle: handle)
    }

    /// Waits up to `wait` for a publisher in the room (named `display`, or with the id `feed`, if
    /// given), subscribes to it and returns Janus's offer. On a failure the session is destroyed
    /// again. `substream` picks a simulcast publisher's layer (0 the smallest; nil: the largest).
    public func subscribe(
        display: String? = nil, feed: Int? = nil, wait: Duration = .seconds(30), substream: Int? = nil
    ) async throws(Failure) -> String {
        do {
            return try await findAndSubscribe(display: display, feed: feed, wait: wait, substream: substream)
        } catch {
            await session.close()
            throw error
        }
    }

    private func findAndSubscribe(display: String?, feed: Int?, wait: Duration, substream: Int?)
        async throws(Failure) -> String
    {
        let place = "Janus at \(redactedURL(target.url))"
        try await session.open()
        let handle = try await session.attach()
        self.handle = handle
        let deadline = ContinuousClock.now + wait
        var found: Publisher?
        while found == nil {
            let listed = try await session.send(
                .listParticipants(room: target.room), on: handle, what: "listing room \(target.room)")
            found = Self.publishers(in: listed).first {
                (display == nil || $0.display == display) && (feed == nil || $0.id == feed)
            }
            if found == nil {
                guard ContinuousClock.now < deadline else {
                    throw Failure(
                        description: "\(place): room \(target.room) has no publisher"
                            + "\(display.map { " named '\($0)'" } ?? "")\(feed.map { " with the id \($0)" } ?? "") "
                            + "after \(wait.secondsText)")
                }
                do { try await Task.sleep(for: .milliseconds(500)) } catch {
                    throw Failure(description: "\(place): cancelled while waiting for a publisher")
                }
            }
        }
        publisher = found
        let attached = try await session.send(
            .subscribe(room: target.room, pin: target.pin, feeds: [found!.id], substream: substream), on: handle,
            what: "subscribing to \(found!.display ?? String(found!.id))")
        guard let jsep = attached.jsep, jsep.type == "offer" else {
            throw Failure(description: "\(place): subscribing: its reply carries no SDP offer")
        }
        return jsep.sdp
    }

    /// Sends our answer; Janus then starts sending.
    public func start(answer: String) async throws(Failure) {
        guard let handle else { throw Failure(description: "subscribe first") }
        _ = try await session.send(.start(answer: answer), on: handle, what: "starting the subscription")
    }

    /// Asks Janus for another simulcast layer of the subscribed video `mid` (0 the smallest).
    public func configure(mid: String, substream: Int) async throws(Failure) {
        guard let handle else { throw Failure(description: "subscribe first") }
        _ = try await session.send(
            .configure(mid: mid, substream: substream), on: handle, what: "asking for layer \(substream)")
    }

    public func stop() async {
        if let handle { await session.leave(on: handle) }
        await session.close()
    }

    /// The publishers in a `listparticipants` reply (`participants[]` with `publisher: true`).
    static func publishers(in reply: JanusReply) -> [Publisher] {
        guard let participants = reply.pluginData?["participants"]?.arrayValue else { return [] }
        return participants.compactMap { entry in
            guard entry["publisher"]?.boolValue == true, let id = entry["id"].flatMap(JanusReply.integer) else {
                return nil
            }
            return Publisher(id: id, display: entry["display"]?.stringValue.map { escapedForLog($0, limit: 64) })
        }
    }
}
