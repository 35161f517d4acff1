import Foundation
import GLibLoop
import ShareCore

/// One session with Janus over its WebSocket API (`janus-protocol`), and the plugin handles in it:
/// requests under their transactions, a keepalive every 25 s (Janus drops a session after 60 s of
/// silence), and what Janus says unasked about a handle.
///
/// - Each request waits at most `timeout` for its reply; Janus's error, or the plugin's
///   (`error_code`), is thrown as a `JanusError`.
/// - A handle ends when Janus hangs it up or detaches it; the session when it times out or the
///   socket closes. Each end is kept (`ended(handle:)`) and logged once.
public actor JanusSession {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let url: String
    private let loop: GLibLoop
    private let logger: Logger
    public let timeout: Duration
    private var socket: RoomSocket?
    private var session: Int?
    /// Requests waiting for their reply, by transaction; `event` ones skip Janus's ack.
    private var pending: [String: (event: Bool, waiter: CheckedContinuation<JanusReply, any Error>)] = [:]
    private var reader: Task<Void, Never>?
    private var keepalive: Task<Void, Never>?
    /// Why the session ended (nil while it stands).
    public private(set) var ended: String?
    private var handleEnds: [Int: String] = [:]
    /// Handles we asked to leave: their hangup is the answer, not news.
    private var leaving: Set<Int> = []
    /// Handles whose WebRTC side Janus says is up (`webrtcup`).
    private var webrtcUp: Set<Int> = []

    public init(url: String, loop: GLibLoop, logger: Logger = .disabled, timeout: Duration = .seconds(10))
        throws(Failure)
    {
        guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
            throw Failure(
                description: "Janus is reached at its WebSocket address, ws://HOST:PORT, not '\(redactedURL(url))'")
        }
        self.url = url
        self.loop = loop
        self.logger = logger
        self.timeout = timeout
    }

    private var place: String { "Janus at \(redactedURL(url))" }

    /// Connects and creates the session.
    public func open() async throws(Failure) {
        do {
            socket = try await RoomSocket.connect(
                loop: loop, url: url, timeout: timeout, protocols: ["janus-protocol"], logger: logger)
        } catch {
            // The socket's reason starts with the address, which `place` already says.
            let reason = "\(error)"
            let address = "\(redactedURL(url)): "
            throw Failure(
                description: "\(place): \(reason.hasPrefix(address) ? String(reason.dropFirst(address.count)) : reason)"
            )
        }
        let events = socket!.events
        reader = Task { [weak self] in
            for await event in events { await self?.received(event) }
        }
        session = try await step("creating a session", .create).id
        guard session != nil else { throw Failure(description: "\(place): its session reply carries no id") }
        keepalive = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(25))
                guard !Task.isCancelled else { return }
                await self?.sendKeepalive()
            }
        }
    }

    /// A new handle on `plugin`.
    public func attach(_ plugin: String = "janus.plugin.videoroom") async throws(Failure) -> Int {
        guard let id = try await step("attaching \(plugin)", .attach(plugin: plugin)).id else {
            throw Failure(description: "\(place): its attach reply carries no handle id")
        }
        return id
    }

    /// Sends `request` on `handle` and returns its reply: the plugin's event (Janus's ack
    /// skipped) or, for a request the plugin answers at once, the success. `what` names the step
    /// in a failure.
    public func send(_ request: JanusRequest, on handle: Int, what: String) async throws(Failure) -> JanusReply {
        try await step(what, request, handle: handle, event: true)
    }

    /// Why Janus ended this handle (nil while it stands, or the session's end).
    public func ended(handle: Int) -> String? { handleEnds[handle] ?? ended }

    public func isWebRTCUp(handle: Int) -> Bool { webrtcUp.contains(handle) }

    /// Sends `request` on `handle` without failing: at most 2 s, for endings (`leave`).
    @discardableResult
    public func sendQuietly(_ request: JanusRequest, on handle: Int) async -> Bool {
        guard socket != nil, ended == nil, handleEnds[handle] == nil else { return false }
        return (try? await self.request(request, handle: handle, event: true, within: .seconds(2))) != nil
    }

    /// Leaves on `handle` and, when its WebRTC side was up, hangs its PeerConnection up and waits
    /// (at most `within`) for Janus to say it is closed before anything else is said: Janus 1.1.2
    /// closing a PeerConnection while it destroys the handle for the session's destroy can crash
    /// in libnice (nice_agent_remove_stream). A subscriber's leave closes it already; a
    /// publisher's does not. Whether Janus answered the leave.
    @discardableResult
    public func leave(on handle: Int, within: Duration = .seconds(2)) async -> Bool {
        let wasUp = webrtcUp.contains(handle)
        leaving.insert(handle)
        guard await sendQuietly(.leave, on: handle) else { return false }
        guard wasUp else { return true }
        if handleEnds[handle] == nil { await sendQuietly(.hangup, on: handle) }
        let clock = ContinuousClock()
        let deadline = clock.now + within
        while handleEnds[handle] == nil, ended == nil, socket != nil, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if handleEnds[handle] == nil {
            logger.info("Janus: no hangup of handle \(handle) within \(within) of the leave")
        }
        return true
    }

    /// Destroys the session (at most 2 s) and closes the socket; whether Janus answered the destroy.
    @discardableResult
    public func close() async -> Bool {
        keepalive?.cancel()
        keepalive = nil
        var destroyed = false
        if let socket, ended == nil, session != nil {
            destroyed = (try? await request(.destroy, handle: nil, within: .seconds(2))) != nil
            socket.close()
        } else {
            socket?.close()
        }
        socket = nil
        reader?.cancel()
        reader = nil
        failPending("the Janus session was closed")
        return destroyed
    }

    // MARK: - Requests

    private func step(_ what: String, _ request: JanusRequest, handle: Int? = nil, event: Bool = false)
        async throws(Failure) -> JanusReply
    {
        do {
            return try await self.request(request, handle: handle, event: event, within: timeout)
        } catch {
            throw Failure(description: "\(place): \(what): \(error)")
        }
    }

    private func request(_ request: JanusRequest, handle: Int?, event: Bool = false, within limit: Duration)
        async throws -> JanusReply
    {
        guard let socket else { throw Failure(description: "not connected") }
        if let ended { throw Failure(description: ended) }
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
            if socket != nil { end("the WebSocket closed (\(reason))") }
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

    /// What Janus says without being asked.
    private func notice(_ reply: JanusReply) {
        let handle = reply.sender
        switch reply.kind {
        case "webrtcup":
            if let handle { webrtcUp.insert(handle) }
            logger.info("Janus: the WebRTC side of handle \(handle.map(String.init) ?? "?") is up")
        case "media":
            logger.info("Janus: media on handle \(handle.map(String.init) ?? "?")")
        case "slowlink":
            logger.notice("Janus: it reports a slow link on handle \(handle.map(String.init) ?? "?")")
        case "hangup":
            endHandle(handle, "Janus hung up (\(reply.reason ?? "no reason given"))")
        case "detached":
            endHandle(handle, "Janus detached the handle")
        case "timeout":
            end("Janus timed the session out")
        case "event":
            if let error = reply.pluginError { logger.warning("Janus: \(error)") }
        default:
            break
        }
    }

    private func endHandle(_ handle: Int?, _ reason: String) {
        guard let handle else { return end(reason) }
        guard handleEnds[handle] == nil else { return }
        handleEnds[handle] = reason
        if leaving.contains(handle) {
            logger.info("Janus: \(reason), after our leave")
        } else {
            logger.warning("Janus: \(reason)")
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

    private func sendKeepalive() async {
        guard ended == nil, socket != nil else { return }
        do { _ = try await request(.keepalive, handle: nil, within: timeout) } catch {
            logger.warning("Janus: a keepalive went unanswered: \(error)")
        }
    }

    static func transaction() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in letters.randomElement()! })
    }
}
