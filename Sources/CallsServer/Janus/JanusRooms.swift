internal import CGIO
import Foundation
import GLibLoop
import RoomProtocol
import ShareCore
import Signalling

/// Where a room of `sharectl serve --sfu janus` runs: the Janus instance (its WebSocket), the
/// VideoRoom number Janus gave it, and its PIN and secret, derived from the room's token (so the
/// server need not keep them, and they are never the token itself).
public struct JanusPlacement: Sendable, Equatable {
    public let instance: String
    public let room: Int
    public let pin: String
    public let secret: String

    /// 32 hex digits of HMAC-SHA-256(token, "sharectl janus " + purpose).
    static func derive(token: String, purpose: String) -> String {
        let key = Array(token.utf8)
        let text = "sharectl janus \(purpose)"
        guard
            let digest = key.withUnsafeBufferPointer({
                g_compute_hmac_for_string(G_CHECKSUM_SHA256, $0.baseAddress, gsize($0.count), text, -1)
            })
        else { return "" }
        defer { g_free(digest) }
        return String(String(cString: digest).prefix(32))
    }
}

/// The Janus instances a room server places its rooms on: each new room goes to the instance with
/// the fewest publishers now (Janus's own `list` of its rooms), then the fewest rooms this server
/// put there, then the first given. An instance that does not answer is passed over (and said);
/// none answering is an error.
public actor JanusRooms {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// A Janus to place rooms on: its WebSocket, and its VideoRoom admin key if it has one.
    public struct Instance: Sendable {
        public let url: String
        public let adminKey: String?

        public init(url: String, adminKey: String? = nil) {
            self.url = url
            self.adminKey = adminKey
        }
    }

    public let instances: [Instance]
    private let loop: GLibLoop
    private let logger: Logger
    private var placedCount: [String: Int] = [:]

    public init(instances: [Instance], loop: GLibLoop, logger: Logger = .disabled) {
        self.instances = instances
        self.loop = loop
        self.logger = logger
    }

    /// Makes the room's VideoRoom on the instance chosen.
    public func place(name: String, token: String) async throws(Failure) -> JanusPlacement {
        var best: (key: [Int], instance: Instance)?
        var unreachable: [String] = []
        for (index, instance) in instances.enumerated() {
            do {
                let publishers = try await publisherCount(at: instance)
                let key = [publishers, placedCount[instance.url, default: 0], index]
                logger.debug("Janus at \(redactedURL(instance.url)): \(publishers) publishers")
                if best == nil || key.lexicographicallyPrecedes(best!.key) { best = (key, instance) }
            } catch {
                logger.warning("room \(name): \(error); the room is placed elsewhere")
                unreachable.append("\(error)")
            }
        }
        guard let chosen = best?.instance else {
            throw Failure(description: "no Janus could take room \(name): \(unreachable.joined(separator: "; "))")
        }
        let secret = JanusPlacement.derive(token: token, purpose: "secret")
        let pin = JanusPlacement.derive(token: token, purpose: "pin")
        let reply = try await withHandle(at: chosen.url) { session, handle throws(JanusSession.Failure) in
            try await session.send(
                .createRoom(
                    description: "sharectl room \(name)", secret: secret, pin: pin, publishers: 32,
                    adminKey: chosen.adminKey), on: handle, what: "creating room \(name)")
        }
        guard let room = reply.pluginData?["room"].flatMap(JanusReply.integer) else {
            throw Failure(description: "Janus at \(redactedURL(chosen.url)) made room \(name) but gave no room number")
        }
        placedCount[chosen.url, default: 0] += 1
        logger.info(
            "room \(name) is VideoRoom \(room) on Janus at \(redactedURL(chosen.url)) (\(best!.key[0]) publishers there before)"
        )
        return JanusPlacement(instance: chosen.url, room: room, pin: pin, secret: secret)
    }

    /// Ends the room's VideoRoom (when the server stops); quietly, at most a few seconds.
    public func release(_ placement: JanusPlacement) async {
        do {
            _ = try await withHandle(at: placement.instance) { session, handle throws(JanusSession.Failure) in
                try await session.send(
                    .destroyRoom(room: .number(placement.room), secret: placement.secret), on: handle,
                    what: "ending VideoRoom \(placement.room)")
            }
        } catch {
            logger.notice("\(error)")
        }
    }

    /// Publishers in all of the instance's rooms.
    public func publisherCount(at instance: Instance) async throws(Failure) -> Int {
        try await rooms(at: instance).reduce(0) { $0 + $1.publishers }
    }

    /// The instance's rooms (each VideoRoom number with its publishers), as Janus lists them.
    public func rooms(at instance: Instance) async throws(Failure) -> [(room: Int, publishers: Int)] {
        let reply = try await withHandle(at: instance.url) { session, handle throws(JanusSession.Failure) in
            try await session.send(.listRooms(adminKey: instance.adminKey), on: handle, what: "listing its rooms")
        }
        return (reply.pluginData?["list"]?.arrayValue ?? []).compactMap { entry in
            entry["room"].flatMap(JanusReply.integer).map {
                ($0, entry["num_participants"].flatMap(JanusReply.integer) ?? 0)
            }
        }
    }

    private func withHandle(
        at url: String, _ body: (JanusSession, Int) async throws(JanusSession.Failure) -> JanusReply
    ) async throws(Failure) -> JanusReply {
        do {
            let session = try JanusSession(url: url, loop: loop, logger: logger, timeout: .seconds(5))
            try await session.open()
            do {
                let handle = try await session.attach()
                let reply = try await body(session, handle)
                await session.close()
                return reply
            } catch {
                await session.close()
                throw error
            }
        } catch {
            throw Failure(description: "\(error)")
        }
    }
}
