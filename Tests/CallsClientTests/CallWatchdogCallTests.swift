import CallsClient
import TestSupport
import Testing

/// The receiver-driven ladder in a real call: a room server on 127.0.0.1, a sharer and a viewer
/// (libsoup WebSockets, libnice, DTLS-SRTP, x264 and its decoder). The viewer's decoder of the
/// screen is wedged by the fault drills use; the viewer reports the screen stalled, the sharer's
/// watchdog climbs to a rebuild for that viewer alone, and the viewer's new decoder moves again.
/// A sticky wedge outlives the rebuild and takes the share again. Timeouts only guard against hangs.
@Suite(.serialized) struct CallWatchdogCallTests {
    private func call(_ room: TestRoomServer) async throws -> (sharer: CallSession, viewer: CallSession) {
        let invite = room.invite
        var sharerOptions = CallSession.Options(invite: invite, name: "Ana")
        sharerOptions.shareScreen = true
        sharerOptions.screenWidth = 320
        sharerOptions.screenHeight = 180
        sharerOptions.framesPerSecond = 15
        sharerOptions.loopbackOnly = true
        sharerOptions.welcomeTimeout = .seconds(60)  // a hang guard: the run shares two cores
        var viewerOptions = CallSession.Options(invite: invite, name: "Vi")
        viewerOptions.loopbackOnly = true
        viewerOptions.welcomeTimeout = .seconds(60)  // a hang guard: the run shares two cores
        let sharer = try CallSession(options: sharerOptions, loop: room.loop, logger: .disabled)
        let viewer = try CallSession(options: viewerOptions, loop: room.loop, logger: .disabled)
        try await sharer.start()
        try await viewer.start()
        try await until("the viewer decodes Ana's screen") {
            (await viewer.statistics().peers.first { $0.name == "Ana" }?.screen?.framesDecoded ?? 0) >= 15
        }
        return (sharer, viewer)
    }

    private func anasScreen(_ viewer: CallSession) async -> CallStatistics.View? {
        await viewer.statistics().peers.first { $0.name == "Ana" }?.screen
    }

    @Test func aWedgedViewerDecoderIsRebuiltAndTheViewMovesAgain() async throws {
        let room = try await TestRoomServer.start()
        let (sharer, viewer) = try await call(room)
        let before = try #require(await anasScreen(viewer))
        let said = await viewer.injectFault(.decoderWedge(name: "Ana", sticky: false))
        #expect(said.hasPrefix("Fault:"))
        try await until("the viewer's stats list the fault") {
            await viewer.statistics().faults == ["decoder-wedge Ana"]
        }

        let stalled: CallStatistics.View = try await eventually("the viewer reports Ana's screen stalled") {
            let screen = await anasScreen(viewer)
            return screen?.stalled == true ? screen : nil
        }
        #expect(stalled.mid == before.mid)
        let rebuilt = try await eventually("the sharer's watchdog rebuilds the screen for Vi") {
            await sharer.statistics().watchdog?.recent.first { $0.action == "rebuild" }
        }
        #expect(rebuilt.reason.contains("Vi still reports the screen stalled"))
        let recent = try #require(await sharer.statistics().watchdog?.recent)
        #expect(recent.first?.action == "keyframe")
        let moving: CallStatistics.View = try await eventually("the viewer decodes Ana's screen on a new section again")
        {
            guard let screen = await anasScreen(viewer), screen.mid != before.mid, screen.framesDecoded >= 15,
                !screen.stalled
            else { return nil }
            return screen
        }
        #expect(moving.width == 320)
        try await until("the viewer's stats list no fault once the screen is rebuilt") {
            await viewer.statistics().faults.isEmpty
        }
        try await until("the sharer's watchdog is back to watching") {
            await sharer.statistics().watchdog?.state == "watching"
        }
        #expect(await sharer.statistics().watchdog?.recent.contains { $0.action == "shareAgain" } == false)
        await viewer.stop()
        await sharer.stop()
        await room.stop()
    }

    /// Every new decoder wedges too, so only the share again (the same capture, the same section
    /// made to send anew) restores the view. This once failed about half the time, for two reasons
    /// now mended: the section's new sender started its RTP numbers afresh on the old SSRC (SRTP
    /// refused them), and the replaced section's last packets were routed to the new one (see the
    /// router tests in `PeerConnectionPartsTests`).
    @Test func aStickyWedgeOutlivesTheRebuildAndEndsWithTheShareAgain() async throws {
        let room = try await TestRoomServer.start()
        let (sharer, viewer) = try await call(room)
        let first = try #require(await anasScreen(viewer)?.mid)
        _ = await viewer.injectFault(.decoderWedge(name: nil, sticky: true))
        let shared = try await eventually("the sharer shares again", within: .seconds(120)) {
            await sharer.statistics().watchdog?.recent.first { $0.action == "shareAgain" }
        }
        #expect(shared.subject == nil)
        let steps = try #require(await sharer.statistics().watchdog?.recent.map(\.action))
        #expect(steps.contains("rebuild"))
        let moving: CallStatistics.View = try await eventually("the viewer decodes Ana's shared-again screen") {
            guard let screen = await anasScreen(viewer), screen.mid != first, screen.framesDecoded >= 15,
                !screen.stalled
            else { return nil }
            return screen
        }
        #expect(moving.framesDecoded >= 15)
        try await until("the viewer's stats list no fault once Ana shared again") {
            await viewer.statistics().faults.isEmpty
        }
        let shares = await sharer.statistics().sharesSent
        #expect(shares == 3, "share messages: \(shares)")  // on, off, on
        await viewer.stop()
        await sharer.stop()
        await room.stop()
    }
}
