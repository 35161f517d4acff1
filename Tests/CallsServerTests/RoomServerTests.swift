@testable import CallsServer
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import TestSupport
import Testing

/// The libsoup layer on a real socket: the invite link, refusals before the upgrade, client files.
@Suite struct RoomServerTests {
    func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func servesTheClientOnlyWithTheRoomsToken() async throws {
        let running = try await TestRoomServer.start(room: "t1")
        let (server, base, invite) = (running.server, running.base, running.invite)
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
        await running.stop()
    }

    @Test func aStateFileKeepsTheToken() async throws {
        let path = NSTemporaryDirectory() + "room-state-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try await TestRoomServer.start(room: "kept", stateFile: path)
        await first.stop()
        let second = try await TestRoomServer.start(room: "kept", stateFile: path)
        #expect(second.invite.split(separator: "?").last == first.invite.split(separator: "?").last)
        await #expect(throws: RoomServerError.self) { try await second.server.addRoom(named: "other", stateFile: path) }
        await second.stop()
    }
}
