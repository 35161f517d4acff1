import Foundation
import GLibLoop
import ShareCore

/// One publisher in an existing Janus VideoRoom, over Janus's WebSocket API (`janus-protocol`):
/// a session, a VideoRoom handle, a `join` as publisher (with the room's pin and a display name),
/// and a `publish` whose answer it returns. Media is not this type's concern: it takes an offer
/// and returns the answer, as `WHIPClient` does.
///
/// - Each request waits at most `timeout` for its reply; Janus's error, or the plugin's
///   (`error_code`), becomes a `Failure` naming the step and Janus's words.
/// - A keepalive goes every 25 s while it lives (Janus drops a session after 60 s of silence).
/// - What Janus says of the handle afterwards (hangup, detached, a session timeout, the socket
///   closed) is kept as `ended`, and logged once.
public actor JanusPublisher {
    public struct Target: Sendable, Equatable {
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

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let target: Target
    private let loop: GLibLoop
    private let logger: Logger
    private let timeout: Duration
    private var socket: RoomSocket?
    private var session: Int?
    private var handle: Int?
    /// Requests waiting for their reply, by transaction; `event` ones skip Janus's ack.
    private var pending: [String: (event: Bool, waiter: CheckedContinuation<JanusReply, any Error>)] = [:]
    private var reader: Task<Void, Never>?
    private var keepalive: Task<Void, Never>?
    /// Why the publisher ended on Janus's side (nil while it stands).
    public private(set) var ended: String?
    /// Janus said its WebRTC side is up (`webrtcup`).
    public private(set) var webrtcUp = false
    /// This publisher's id in the room, once joined.
    public private(set) var publisherID: Int?

    public init(target: Target, loop: GLibLoop, logger: Logger = .disabled, timeout: Duration = .seconds(10))
        throws(Failure)
    {
        guard target.url.hasPrefix("ws://") || target.url.hasPrefix("wss://") else {
            throw Failure(
                description: "--janus wants Janus's WebSocket address, ws://HOST:PORT, not '\(redactedURL(target.url))'"
            )
        }
        self.target = target
        self.loop = loop
        self.logger = logger
        self.timeout = timeout
    }

    /// Joins the room as a publisher and publishes `offer`; returns Janus's answer. On a failure,
    /// what was made on Janus's side (the session) is destroyed again.
    public func publish(offer: String) async throws(Failure) -> String {
        do {
            return try await joinAndPublish(offer: offer)
        } catch {
            await stop()
            throw error
        }
    }

    private func joinAndPublish(offer: String) async throws(Failure) -> String {
        let where_ = "Janus at \(redactedURL(target.url))"
        do {
            socket = try await RoomSocket.connect(
                loop: loop, url: target.url, timeout: timeout, protocols: ["janus-protocol"], logger: logger)
        } catch {
            throw Failure(description: "\(where_): \(error)")
        }
        let events = socket!.events
        reader = Task { [weak self] in
            for await event in events { await self?.received(event) }
        }
        session = try await step("creating a session", .create).id
        guard session != nil else { throw Failure(description: "\(where_): its session reply carries no id") }
        startKeepalive()
        handle = try await step("attaching the VideoRoom plugin", .attach(plugin: "janus.plugin.videoroom")).id
        guard handle != nil else { throw Failure(description: "\(where_): its attach reply carries no handle id") }
        let joined = try await step(
            "joining room \(target.room)", .join(room: target.room, pin: target.pin, display: target.display),
            event: true)
        guard joined.pluginData?["videoroom"]?.stringValue == "joined" else {
            throw Failure(
                description: "\(where_): joining room \(target.room): an unexpected reply "
                    + "(\(joined.pluginData?["videoroom"]?.stringValue ?? joined.kind))")
        }
        publisherID = joined.pluginData?["id"].flatMap(JanusReply.integer)
        let published = try await step("publishing", .publish(offer: offer), event: true)
        guard let jsep = published.jsep, jsep.type == "answer" else {
            throw Failure(description: "\(where_): publishing: its reply carries no SDP answer")
        }
        logger.info(
            "Janus: publishing in room \(target.room) as \(publisherID.map(String.init) ?? "?")",
            ["janus.room": "\(target.room)"])
        return jsep.sdp
    }

    /// Leaves the room, destroys the session and closes the socket (each step waits at most 2 s).
    public func stop() async {
        keepalive?.cancel()
        keepalive = nil
        if let socket, ended == nil, session != nil {
            if handle != nil { _ = try? await request(.leave, event: true, within: .seconds(2)) }
            _ = try? await request(.destroy, within: .seconds(2))
            socket.close()
        } else {
            socket?.close()
        }
        socket = nil
        reader?.cancel()
        reader = nil
        failPending("the publisher stopped")
    }

    // MARK: - Requests

    private func step(_ what: String, _ request: JanusRequest, event: Bool = false) async throws(Failure) -> JanusReply
    {
        do {
            return try await self.request(request, event: event, within: timeout)
        } catch {
            throw Failure(description: "Janus at \(redactedURL(target.url)): \(what): \(error)")
        }
    }

    private func request(_ request: JanusRequest, event: Bool = false, within limit: Duration) async throws
        -> JanusReply
    {
        guard let socket else { throw Failure(description: "not connected") }
        let transaction = Self.transaction()
        let text = request.text(transaction: transaction, session: session, handle: handle)
        let timer = Task { [weak self] in
            try? await Task.sleep(for: limit)
            await self?.expire(transaction, after: limit)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { waiter in
            pending[transaction] = (event, waiter)
            socket.send(text)
        }
    }

    private func expire(_ transaction: String, after limit: Duration) {
        pending.removeValue(forKey: transaction)?.waiter.resume(
            throwing: Failure(description: "no reply within \(limit.secondsText)"))
    }

    private func received(_ event: RoomSocket.Event) {
        switch event {
        case .closed(let reason):
            if ended == nil, socket != nil { end("the WebSocket closed (\(reason))") }
            failPending("the WebSocket closed (\(reason))")
        case .text(let text):
            let reply: JanusReply
            do { reply = try JanusReply.parse(text) } catch {
                logger.warning("Janus: \(error)")
                return
            }
            if let transaction = reply.transaction, let entry = pending[transaction] {
                if reply.kind == "ack", entry.event { return }
                pending[transaction] = nil
                if let error = reply.error ?? reply.pluginError {
                    entry.waiter.resume(throwing: error)
                } else {
                    entry.waiter.resume(returning: reply)
                }
                return
            }
            notice(reply)
        }
    }

    /// What Janus says without being asked, about our handle or session.
    private func notice(_ reply: JanusReply) {
        if let sender = reply.sender, let handle, sender != handle { return }
        switch reply.kind {
        case "webrtcup":
            webrtcUp = true
            logger.info("Janus: its WebRTC side of the publisher is up")
        case "media":
            logger.info("Janus: receiving our media", ["janus.media": reply.reason ?? ""])
        case "slowlink":
            logger.notice("Janus: it reports a slow link from us")
        case "hangup":
            end("Janus hung up the publisher (\(reply.reason ?? "no reason given"))")
        case "detached":
            end("Janus detached the publisher")
        case "timeout":
            end("Janus timed the session out")
        case "event":
            if let error = reply.pluginError { logger.warning("Janus: \(error)") }
        default:
            break
        }
    }

    private func end(_ reason: String) {
        guard ended == nil else { return }
        ended = reason
        logger.warning("Janus: \(reason)")
    }

    private func failPending(_ reason: String) {
        let waiting = pending
        pending = [:]
        for entry in waiting.values { entry.waiter.resume(throwing: Failure(description: reason)) }
    }

    private func startKeepalive() {
        keepalive = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(25))
                guard !Task.isCancelled else { return }
                await self?.sendKeepalive()
            }
        }
    }

    private func sendKeepalive() async {
        guard ended == nil, socket != nil else { return }
        do { _ = try await request(.keepalive, within: timeout) } catch {
            logger.warning("Janus: a keepalive went unanswered: \(error)")
        }
    }

    static func transaction() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in letters.randomElement()! })
    }
}
