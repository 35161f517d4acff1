@testable import CallsServer
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import GLibLoop
import RoomProtocol
import ShareCore
import Signalling
import TestSupport
import Testing

/// `serve --sfu janus` against two real Janus processes (Debian's janus, started by the server's
/// own `JanusProcess`): rooms placed on different instances, the VideoRoom made with the PIN and
/// secret derived from the token, the door to Janus letting through a participant's requests in
/// its own room only, and the rooms ended on Janus when the server stops. (Media through Janus
/// needs the gate namespace's j0; the `janus_room` gates carry it.)
@Suite(.serialized) struct JanusRoomServerTests {
    func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// Sends one Janus message on `socket` and returns the next message that carries its transaction.
    func ask(
        _ socket: Signalling.RoomSocket, _ events: inout AsyncStream<Signalling.RoomSocket.Event>.Iterator,
        _ message: [String: JSONValue]
    ) async throws -> [String: JSONValue] {
        let transaction = String(UUID().uuidString.prefix(8))
        var object = message
        object["transaction"] = .string(transaction)
        socket.send(JSONValue.object(object).text)
        while let event = await events.next() {
            guard case .text(let text) = event else { break }
            let reply = try #require(JSONValue.parse(text)?.objectValue)
            if reply["transaction"] == .string(transaction), reply["janus"] != .string("ack") { return reply }
        }
        Issue.record("the socket ended before Janus answered \(message)")
        return [:]
    }

    @Test func roomsArePlacedAcrossJanusAndReachedOnlyThroughTheServer() async throws {
        let loop = GLibLoop(name: "janus-room-test")
        defer { loop.stop() }
        let first = try await JanusProcess.start(iceInterfaces: [], loop: loop, logger: .disabled)
        let second: JanusProcess
        do { second = try await JanusProcess.start(iceInterfaces: [], loop: loop, logger: .disabled) } catch {
            await first.stop()
            throw error
        }
        let instances = [first, second].map { JanusRooms.Instance(url: $0.url, adminKey: $0.adminKey) }
        let janus = JanusRooms(instances: instances, loop: loop)
        let server = RoomServer(loop: loop, client: try ClientFiles.bundled(), janus: janus)
        let base = try await server.start(RoomServerConfiguration(host: "127.0.0.1", port: 0, limits: .underTest))
        let alpha = try await server.addRoom(named: "alpha")
        _ = try await server.addRoom(named: "beta")
        let a = try #require(await server.placement(ofRoom: "alpha"))
        let b = try #require(await server.placement(ofRoom: "beta"))
        #expect(a.instance != b.instance, "two rooms on two empty Janus instances land on different ones")
        let firstRooms = try await janus.rooms(at: instances[0]).map(\.room)
        let secondRooms = try await janus.rooms(at: instances[1]).map(\.room)
        #expect(Set(firstRooms + secondRooms) == [a.room, b.room] && firstRooms.count == 1)
        let token = String(alpha.split(separator: "=").last!)
        #expect(a.pin == JanusPlacement.derive(token: token, purpose: "pin") && a.pin.count == 32)
        #expect(a.secret != a.pin && !a.secret.contains(token) && a.pin != b.pin)

        // What the room's page and clients learn: its Janus door, its VideoRoom and its PIN.
        let (status, body) = try await get(base + "/sfu/alpha?t=" + token)
        #expect(status == 200)
        #expect(
            JSONValue.parse(body)
                == .object([
                    "sfu": .string("janus"), "janus": .string("/janus/alpha"), "room": .int(a.room),
                    "pin": .string(a.pin)
                ]))
        #expect(try await get(base + "/sfu/alpha?t=wrong").0 == 403)
        #expect(try await get(base + "/sfu/beta?t=" + token).0 == 403)
        let (pageStatus, page) = try await get(alpha)
        #expect(pageStatus == 200 && page.contains("/client/janus-room.js") && page.contains("/client/janus.js"))
        #expect(try await get(base + "/client/janus.js").0 == 200)

        // The door: a wrong token is refused before the upgrade.
        await #expect(throws: (any Error).self) {
            _ = try await Signalling.RoomSocket.connect(
                loop: loop, url: base.replacingOccurrences(of: "http", with: "ws") + "/janus/alpha?t=wrong",
                protocols: ["janus-protocol"])
        }
        let socket = try await Signalling.RoomSocket.connect(
            loop: loop, url: base.replacingOccurrences(of: "http", with: "ws") + "/janus/alpha?t=" + token,
            protocols: ["janus-protocol"])
        var events = socket.events.makeAsyncIterator()
        let session = try #require(try await ask(socket, &events, ["janus": .string("create")])["data"]?["id"])
        let handle = try #require(
            try await ask(
                socket, &events,
                ["janus": .string("attach"), "plugin": .string("janus.plugin.videoroom"), "session_id": session]
            )["data"]?["id"])
        func message(_ body: [String: JSONValue]) async throws -> [String: JSONValue] {
            try await ask(
                socket, &events,
                ["janus": .string("message"), "session_id": session, "handle_id": handle, "body": .object(body)])
        }
        // Its own room's participants, from Janus itself.
        let listed = try await message(["request": .string("listparticipants"), "room": .int(a.room)])
        #expect(listed["janus"] == .string("success"))
        #expect(listed["plugindata"]?["data"]?["room"] == .int(a.room))
        // Another room, a new room, ending this one: refused by the server, under their transactions.
        for body: [String: JSONValue] in [
            ["request": .string("listparticipants"), "room": .int(b.room)],
            ["request": .string("create"), "room": .int(99)],
            ["request": .string("destroy"), "room": .int(a.room), "secret": .string(a.secret)]
        ] {
            let refused = try await message(body)
            #expect(refused["janus"] == .string("error") && refused["error"]?["code"] == .int(403), "\(body)")
        }
        let stillFirst = try await janus.rooms(at: instances[0]).count
        let stillSecond = try await janus.rooms(at: instances[1]).count
        #expect(stillFirst + stillSecond == 2)
        socket.close()

        // Stopping the server ends its rooms on Janus.
        await server.stop()
        let leftFirst = try await janus.rooms(at: instances[0])
        let leftSecond = try await janus.rooms(at: instances[1])
        #expect(leftFirst.isEmpty && leftSecond.isEmpty)
        await first.stop()
        await second.stop()
        try? FileManager.default.removeItem(atPath: first.directory)
        try? FileManager.default.removeItem(atPath: second.directory)
    }

    @Test func aMeshRoomSaysSoAndHasNoDoorToJanus() async throws {
        let running = try await TestRoomServer.start(room: "mesh")
        let token = String(running.invite.split(separator: "=").last!)
        let (status, body) = try await get(running.base + "/sfu/mesh?t=" + token)
        #expect(status == 200 && JSONValue.parse(body) == .object(["sfu": .string("mesh")]))
        #expect(try await get(running.base + "/janus/mesh?t=" + token).0 == 404)
        #expect(try await get(running.base + "/janus/mesh?t=wrong").0 == 403)
        #expect(try await get(running.invite).1.contains("/client/room.js"))
        await running.stop()
    }
}
