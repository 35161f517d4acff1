internal import CSoup
import Foundation
import GLibLoop
import RoomProtocol
import ShareCore
import Signalling

/// The door to Janus of a room on it (`serve --sfu janus`): each participant's WebSocket at
/// `/janus/ROOM?t=TOKEN` (the token checked before the upgrade, like `/ws`) is joined to a
/// WebSocket of its own to the room's Janus instance. What the participant sends is judged by
/// `JanusProxyRule` (VideoRoom requests in this room only); what Janus sends is passed on as it
/// is. Either side closing closes the other, and Janus then ends that participant's session.
extension ServerState {
    /// At most this many messages wait for the WebSocket to Janus to open.
    static let maxWaitingForJanus = 64

    func acceptedJanus(_ connection: OpaquePointer, message: OpaquePointer, path: String) {
        guard let confined, let loop,
            let (socket, hosted) = admit(connection, message: message, path: path, kind: .janus),
            let placement = hosted.janus
        else { return }
        let id = socket.id
        proxyRules[id] = JanusProxyRule(room: placement.room, maxBytes: limits.maxFrameBytes)
        waitingForUpstream[id] = []
        logger.info(
            "connection \(id): Janus API of room \(socket.roomName) proxied to Janus at \(redactedURL(placement.instance))"
        )
        let logger = logger
        Task {
            let upstream: Signalling.RoomSocket
            do {
                upstream = try await Signalling.RoomSocket.connect(
                    loop: loop, url: placement.instance, timeout: .seconds(5), protocols: ["janus-protocol"],
                    logger: logger)
            } catch {
                confined.invoke { $0.upstreamEnded(id, reason: "Janus could not be reached: \(error)") }
                return
            }
            confined.invoke { $0.upstreamOpened(id, upstream) }
            for await event in upstream.events {
                switch event {
                case .text(let text): confined.invoke { $0.fromJanus(text, to: id) }
                case .closed(let reason): confined.invoke { $0.upstreamEnded(id, reason: "Janus closed (\(reason))") }
                }
            }
        }
    }

    func upstreamOpened(_ id: ConnectionID, _ upstream: Signalling.RoomSocket) {
        guard sockets[id] != nil else { return upstream.close() }
        upstreams[id] = upstream
        for text in waitingForUpstream.removeValue(forKey: id) ?? [] { upstream.send(text) }
    }

    /// A participant's message: to Janus when the rule lets it through, else Janus-shaped refused.
    func proxy(_ text: String, from socket: RoomSocket) {
        guard let rule = proxyRules[socket.id] else { return }
        switch rule.judge(text) {
        case .refuse(let reason, let answer):
            logger.notice("connection \(socket.id): refused a message to Janus: \(reason)")
            if !socket.send(answer) { drop(socket, why: "more than \(limits.maxSocketOutputBytes) bytes unread") }
        case .forward:
            if let upstream = upstreams[socket.id] { return upstream.send(text) }
            guard (waitingForUpstream[socket.id]?.count ?? 0) < Self.maxWaitingForJanus else {
                return drop(socket, why: "more than \(Self.maxWaitingForJanus) messages before Janus answered")
            }
            waitingForUpstream[socket.id, default: []].append(text)
        }
    }

    func fromJanus(_ text: String, to id: ConnectionID) {
        guard let socket = sockets[id] else { return }
        if !socket.send(text) { drop(socket, why: "more than \(limits.maxSocketOutputBytes) bytes unread") }
    }

    func upstreamEnded(_ id: ConnectionID, reason: String) {
        upstreams[id] = nil
        guard let socket = sockets[id] else { return }
        logger.notice("connection \(id): \(reason)")
        socket.close(code: 1011, reason: String(reason.utf8.prefix(120)) ?? "Janus closed")
    }

    /// The participant's side closed: so does its WebSocket to Janus.
    func proxyClosed(_ socket: RoomSocket) {
        upstreams.removeValue(forKey: socket.id)?.close()
        waitingForUpstream[socket.id] = nil
        proxyRules[socket.id] = nil
    }
}
