import CallsServer
import GLibLoop
import ShareCore
import RoomProtocol

/// A room server for a test: on 127.0.0.1 at a free port, on a GLib loop of its own, serving the
/// bundled browser client, with one room open. `stop()` closes it and its loop.
public struct TestRoomServer: Sendable {
    public let loop: GLibLoop
    public let server: RoomServer
    /// `http://127.0.0.1:PORT`.
    public let base: String
    /// The room's name and its invite link (`base/r/ROOM?t=TOKEN`).
    public let room: String
    public let invite: String

    public static func start(
        room: String = "test", limits: RoomLimits = .underTest, allowedOrigins: [String] = [],
        stateFile: String? = nil, logger: Logger = .disabled
    ) async throws -> TestRoomServer {
        let client = try ClientFiles.bundled()
        let loop = GLibLoop(name: "room-server-test")
        let server = RoomServer(loop: loop, client: client, logger: logger)
        do {
            let base = try await server.start(
                RoomServerConfiguration(
                    host: "127.0.0.1", port: 0, limits: limits,
                    allowedOrigins: allowedOrigins))
            let invite = try await server.addRoom(named: room, stateFile: stateFile)
            return TestRoomServer(loop: loop, server: server, base: base, room: room, invite: invite)
        } catch {
            await server.stop()
            loop.stop()
            throw error
        }
    }

    public func stop() async {
        await server.stop()
        loop.stop()
    }
}

extension RoomLimits {
    /// The server's limits with a join timeout that only guards against hangs: the whole test run
    /// shares two cores, and a client's join has once arrived more than 10 s after its socket.
    public static var underTest: RoomLimits {
        var limits = RoomLimits()
        limits.joinTimeout = .seconds(60)
        return limits
    }
}
