import CallsClient
import CallsServer
import Foundation
import GLibLoop
import Testing
@testable import RoomProtocol

/// Two call sessions in a room of a real room server on 127.0.0.1 (libsoup WebSockets, libnice,
/// DTLS-SRTP, x264, Opus): the viewer decodes the sharer's screen and tone, the sharer sees the
/// viewer's report of it, a stopped share leaves the viewer with no screen, and a wrong token is
/// refused with a reason. Timeouts only guard against hangs.
@Suite(.serialized) struct CallSessionTests {
    private func server() async throws -> (RoomServer, GLibLoop, String) {
        let directory = NSTemporaryDirectory() + "sharectl-client-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("<!doctype html><title>room</title>".utf8).write(to: URL(fileURLWithPath: directory + "/room.html"))
        let loop = GLibLoop(name: "room-server-test")
        let server = RoomServer(loop: loop, client: try ClientFiles(directory: directory))
        _ = try await server.start(RoomServerConfiguration(host: "127.0.0.1", port: 0))
        let invite = try await server.addRoom(named: "test")
        return (server, loop, invite)
    }

    @Test func viewerDecodesTheSharedScreenUntilTheShareStops() async throws {
        let (server, serverLoop, invite) = try await server()
        var sharerOptions = CallSession.Options(invite: invite, name: "Ana")
        sharerOptions.shareScreen = true
        sharerOptions.audio = .synthetic
        sharerOptions.screenWidth = 640
        sharerOptions.screenHeight = 360
        sharerOptions.framesPerSecond = 15
        sharerOptions.loopbackOnly = true
        var viewerOptions = CallSession.Options(invite: invite, name: "Viewer")
        viewerOptions.loopbackOnly = true
        let sharer = try CallSession(options: sharerOptions, loop: serverLoop, logger: .disabled)
        let viewer = try CallSession(options: viewerOptions, loop: serverLoop, logger: .disabled)
        try await sharer.start()
        try await viewer.start()

        let seen: (CallStatistics.Peer, CallStatistics.Peer) = try await until("the viewer decodes Ana's screen and hears her, and Ana hears of it") {
            let v = await viewer.statistics(), s = await sharer.statistics()
            guard let ana = v.peers.first(where: { $0.name == "Ana" }), let me = s.peers.first(where: { $0.name == "Viewer" })
            else { return nil }
            let ok = (ana.screen?.framesDecoded ?? 0) >= 20 && ana.audio?.hearing == true
                && (me.theirView?.screenFramesDecoded ?? 0) > 0 && me.theirView?.hearsUs == true
            return ok ? (ana, me) : nil
        }
        #expect(seen.0.screen?.width == 640 && seen.0.screen?.height == 360)
        #expect(seen.0.sharing && seen.1.video.map { $0.framesSent > 0 } == true)
        #expect(seen.1.connection.state == "connected")
        #expect((await sharer.statistics()).sharesSent == 1)
        #expect((await viewer.statistics()).jsonLine().contains(#""name":"Ana""#))

        await sharer.setSharing(false)
        let _: Bool = try await until("the viewer has no screen of Ana's once she stops") {
            let ana = await viewer.statistics().peers.first { $0.name == "Ana" }
            return ana.map { !$0.sharing && $0.screen == nil && ($0.audio?.samplesDecoded ?? 0) > 0 } == true ? true : nil
        }
        await viewer.stop()
        await sharer.stop()
        await server.stop()
        serverLoop.stop()
    }

    @Test func aWrongTokenIsRefusedWithAReason() async throws {
        let (server, serverLoop, invite) = try await server()
        let wrong = invite.replacingOccurrences(of: "t=", with: "t=x")
        let session = try CallSession(options: .init(invite: wrong, name: "Eve"), loop: serverLoop, logger: .disabled)
        await #expect {
            try await session.start()
        } throws: { error in
            "\(error)".contains("403")
        }
        await session.stop()
        await server.stop()
        serverLoop.stop()
    }

    private func until<T>(_ what: String, _ condition: () async -> T?) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let value = await condition() { return value }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("not reached within the hang guard: \(what)")
        throw CancellationError()
    }
}
