import Foundation
import GLibLoop
import RoomProtocol
import ShareCore

/// Where a room of `sharectl serve` carries its media, asked of the server before joining
/// (`GET /sfu/ROOM?t=TOKEN`): a mesh (each participant sends to each other), or a Janus VideoRoom
/// reached through the server's own WebSocket `/janus/ROOM?t=TOKEN` (`serve --sfu janus`).
public enum RoomSFU {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The room's Janus, as a target for `share`/`watch`'s Janus paths; nil for a mesh room, and
    /// for a server that does not answer the question (an older one: its rooms are meshes). A
    /// server that answers with something other than the two shapes is an error.
    public static func janusTarget(invite: String, display: String?, loop: GLibLoop, logger: Logger = .disabled)
        async throws(Failure) -> JanusTarget?
    {
        guard let ask = address(invite: invite, path: "sfu", scheme: nil) else { return nil }
        let response: HTTPResponse
        do {
            response = try await HTTPClient(loop: loop, maxBodyBytes: 16 * 1024, logger: logger).send(
                HTTPRequest(method: "GET", url: ask), timeout: .seconds(10))
        } catch {
            return nil  // joining the room says why it cannot be reached
        }
        guard response.status == 200 else { return nil }
        return try parse(response.body, invite: invite, display: display)
    }

    /// Reads the server's answer: `{"sfu":"mesh"}`, or `{"sfu":"janus","janus":"/janus/ROOM",
    /// "room":N,"pin":"…"}` (the path on the same server; the token is the invite's).
    public static func parse(_ body: [UInt8], invite: String, display: String?) throws(Failure) -> JanusTarget? {
        guard let answer = JSONValue.parse(String(decoding: body, as: UTF8.self))?.objectValue,
            let sfu = answer["sfu"]?.stringValue
        else {
            throw Failure(
                description: "the room server's answer about the room's media is not what sharectl serve sends")
        }
        switch sfu {
        case "mesh":
            return nil
        case "janus":
            guard let path = answer["janus"]?.stringValue, path.hasPrefix("/janus/"), !path.contains("?"),
                path.utf8.count <= 128,
                let number = answer["room"].flatMap(JanusReply.integer), number > 0,
                let url = address(invite: invite, path: String(path.dropFirst()), scheme: "ws")
            else {
                throw Failure(description: "the room server named a Janus room this client cannot use")
            }
            let pin = answer["pin"]?.stringValue
            guard (pin?.utf8.count ?? 0) <= 128 else {
                throw Failure(description: "the room server named a Janus room this client cannot use")
            }
            return JanusTarget(url: url, room: .number(number), pin: pin, display: display)
        default:
            throw Failure(
                description: "the room runs on '\(escapedForLog(sfu, limit: 24))', which this client does not know")
        }
    }

    /// The invite `http[s]://HOST:PORT/r/ROOM?t=TOKEN` with its path's `r` replaced by `path`'s
    /// first part (`sfu`, or `janus/ROOM`), the token kept; `scheme` "ws" turns http(s) into ws(s).
    static func address(invite: String, path: String, scheme: String?) -> String? {
        guard var parts = URLComponents(string: invite), let current = parts.scheme?.lowercased() else { return nil }
        let segments = parts.path.split(separator: "/")
        guard segments.count == 2, segments[0] == "r" || segments[0] == "ws" else { return nil }
        let secure = current == "https" || current == "wss"
        parts.scheme = scheme == "ws" ? (secure ? "wss" : "ws") : (secure ? "https" : "http")
        parts.path = path.contains("/") ? "/\(path)" : "/\(path)/\(segments[1])"
        return parts.string
    }
}
