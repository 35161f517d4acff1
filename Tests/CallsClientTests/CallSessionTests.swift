import CallsClient
@testable import RoomProtocol
import TestSupport
import Testing

/// Two call sessions in a room of a real room server on 127.0.0.1 (libsoup WebSockets, libnice,
/// DTLS-SRTP, x264, Opus): the viewer decodes the sharer's screen and tone, the sharer sees the
/// viewer's report of it, a stopped share leaves the viewer with no screen, and a wrong token is
/// refused with a reason. Timeouts only guard against hangs.
@Suite(.serialized) struct CallSessionTests {
    @Test func viewerDecodesTheSharedScreenUntilTheShareStops() async throws {
        let room = try await TestRoomServer.start()
        var sharerOptions = CallSession.Options(invite: room.invite, name: "Ana")
        sharerOptions.shareScreen = true
        sharerOptions.audio = .synthetic
        sharerOptions.screenWidth = 640
        sharerOptions.screenHeight = 360
        sharerOptions.framesPerSecond = 15
        sharerOptions.loopbackOnly = true
        sharerOptions.welcomeTimeout = .seconds(60)  // a hang guard: the run shares two cores
        var viewerOptions = CallSession.Options(invite: room.invite, name: "Viewer")
        viewerOptions.loopbackOnly = true
        viewerOptions.welcomeTimeout = .seconds(60)  // a hang guard: the run shares two cores
        let sharer = try CallSession(options: sharerOptions, loop: room.loop, logger: .disabled)
        let viewer = try CallSession(options: viewerOptions, loop: room.loop, logger: .disabled)
        try await sharer.start()
        try await viewer.start()

        let seen: (CallStatistics.Peer, CallStatistics.Peer) = try await eventually(
            "the viewer decodes Ana's screen and hears her, and Ana hears of it"
        ) {
            let v = await viewer.statistics(), s = await sharer.statistics()
            guard let ana = v.peers.first(where: { $0.name == "Ana" }),
                let me = s.peers.first(where: { $0.name == "Viewer" })
            else { return nil }
            let ok =
                (ana.screen?.framesDecoded ?? 0) >= 20 && ana.audio?.hearing == true
                && (me.theirView?.screenFramesDecoded ?? 0) > 0 && me.theirView?.hearsUs == true
            return ok ? (ana, me) : nil
        }
        // The screen's size, or a smaller one of its shape: in a run of every test on two cores this
        // test takes up to a minute, and the sender's CPU rule may step the size down (one such run
        // decoded it smaller).
        let width = seen.0.screen?.width ?? 0, height = seen.0.screen?.height ?? 0
        #expect(width > 0 && width <= 640 && width * 360 == height * 640, "decoded at \(width)×\(height)")
        #expect(seen.0.sharing && seen.1.video.map { $0.framesSent > 0 } == true)
        #expect(seen.1.connection.state == "connected")
        #expect((await sharer.statistics()).sharesSent == 1)
        #expect((await viewer.statistics()).jsonLine().contains(#""name":"Ana""#))

        await sharer.setSharing(false)
        try await until("the viewer has no screen of Ana's once she stops") {
            let ana = await viewer.statistics().peers.first { $0.name == "Ana" }
            return ana.map { !$0.sharing && $0.screen == nil && ($0.audio?.samplesDecoded ?? 0) > 0 } == true
        }
        await viewer.stop()
        await sharer.stop()
        await room.stop()
    }

    @Test func aWrongTokenIsRefusedWithAReason() async throws {
        let room = try await TestRoomServer.start()
        let wrong = room.invite.replacingOccurrences(of: "t=", with: "t=x")
        let session = try CallSession(options: .init(invite: wrong, name: "Eve"), loop: room.loop, logger: .disabled)
        await #expect {
            try await session.start()
        } throws: { error in
            "\(error)".contains("403")
        }
        await session.stop()
        await room.stop()
    }
}
