@testable import CallsServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GLibLoop
import Testing

/// The libsoup layer on a real socket: the invite link, refusals before the upgrade, client files.
@Suite struct RoomServerTests {
    func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func servesTheClientOnlyWithTheRoomsToken() async throws {
        let loop = GLibLoop(name: "room-server-test")
        defer { loop.stop() }
        let client = try ClientFiles.bundled()
        let server = RoomServer(loop: loop, client: client)
        let base = try await server.start(RoomServerConfiguration(host: "127.0.0.1", port: 0))
        let invite = try await server.addRoom(named: "t1")
        #expect(invite.hasPrefix(base + "/r/t1?t="))
        let token = String(invite.split(separator: "=").last!)
        #expect(token.count == 22)

        let (ok, page) = try await get(invite)
        #expect(ok == 200)
        #expect(page.contains("/client/room.js"))
        #expect(try await get(base + "/r/t1?t=" + String(repeating: "A", count: 22)).0 == 403)
        #expect(try await get(base + "/r/t1").0 == 403)
        #expect(try await get(base + "/r/other?t=" + token).0 == 403)
        // A second room: each token opens its own room only.
        let second = try await server.addRoom(named: "t2")
        let secondToken = String(second.split(separator: "=").last!)
        #expect(secondToken != token)
        #expect(try await get(second).0 == 200)
        #expect(try await get(base + "/r/t2?t=" + token).0 == 403)
        #expect(try await get(base + "/ws/t2?t=" + token).0 == 403)
        #expect(try await get(base + "/r/t1?t=" + secondToken).0 == 403)
        let (refused, why) = try await get(base + "/ws/t1?t=wrong")
        #expect(refused == 403)
        #expect(why.contains("token"))
        #expect(try await get(base + "/client/room.js").0 == 200)
        #expect([400, 404].contains(try await get(base + "/client/..%2Froom.js").0))  // libsoup itself says 400
        #expect(try await get(base + "/client/.hidden").0 == 404)
        #expect(try await get(base + "/elsewhere").0 == 404)
        await server.stop()
    }

    @Test func aStateFileKeepsTheToken() async throws {
        let path = NSTemporaryDirectory() + "room-state-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let loop = GLibLoop(name: "room-server-state-test")
        defer { loop.stop() }
        let first = RoomServer(loop: loop, client: try ClientFiles.bundled())
        _ = try await first.start(RoomServerConfiguration(host: "127.0.0.1", port: 0))
        let invite = try await first.addRoom(named: "kept", stateFile: path)
        await first.stop()
        let second = RoomServer(loop: loop, client: try ClientFiles.bundled())
        _ = try await second.start(RoomServerConfiguration(host: "127.0.0.1", port: 0))
        let again = try await second.addRoom(named: "kept", stateFile: path)
        #expect(again.split(separator: "?").last == invite.split(separator: "?").last)
        await #expect(throws: RoomServerError.self) { try await second.addRoom(named: "other", stateFile: path) }
        await second.stop()
    }
}
