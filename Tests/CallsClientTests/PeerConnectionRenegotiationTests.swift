import CallsClient
import Foundation
import GLibLoop
import SDPWire
import ScreenCapture
import ShareCore
import TestSupport
import Testing
import VideoSend
@testable import CallMedia

/// A call leg as a room call uses it, between two real peer connections on 127.0.0.1: audio and a
/// camera both ways, then a screen added by a re-offer, a re-offer from the other side, and the
/// screen set inactive again. Timeouts only guard against hangs.
@Suite struct PeerConnectionRenegotiationTests {
    @Test func screenAddedAndRemovedByRenegotiation() async throws {
        let loop = GLibLoop(name: "pc-renegotiation")
        defer { loop.stop() }
        let a = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        var cameras: [Transceiver] = []
        for pc in [a, b] {
            let audio = try await pc.addTransceiver(kind: .audio, direction: .sendrecv)
            cameras.append(try await pc.addTransceiver(kind: .video, direction: .sendrecv, trackID: "camera"))
            _ = audio
        }
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        for (pc, camera) in zip([a, b], cameras) {
            try await pc.attachVideoSource(
                SyntheticScreenSource(width: 320, height: 180, framesPerSecond: 15), to: camera,
                bitrate: 300_000, framesPerSecond: 15, policy: .detail)
            let audio = try #require(await pc.allTransceivers.first { $0.kind == .audio })
            try await pc.attachAudioTone(to: audio, toneLevelDbfs: -20)
        }
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()
        try await until("both decode the other's camera and audio") {
            let sa = await a.statistics(), sb = await b.statistics()
            return [sa, sb].allSatisfy {
                ($0.transceiver(.video)?.received?.framesDecoded ?? 0) >= 5
                    && ($0.transceiver(.audio)?.received?.audioFramesDecoded ?? 0) >= 5
            }
        }

        // A shares a screen: a new sendonly section by a re-offer.
        let screen = try await a.addTransceiver(kind: .video, direction: .sendonly, trackID: "screen")
        let reoffer = try await a.createOffer()
        #expect(reoffer.components(separatedBy: "m=video").count == 3, "two video sections")
        try await b.setRemoteDescription(reoffer, type: .offer)
        let reanswer = try await b.createAnswer()
        #expect(reanswer.contains("a=setup:active"), "B stays the DTLS client")
        try await a.setRemoteDescription(reanswer, type: .answer)
        let screenMid = try #require(screen.mid)
        #expect(screen.negotiated?.direction == .sendonly)
        try await a.attachVideoSource(
            SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 15), to: screen,
            bitrate: 800_000, framesPerSecond: 15,
            policy: .detail)  // a fixed size even on a busy machine
        try await until("B decodes A's screen at 640×360 beside the camera") {
            let s = await b.statistics()
            let screenAtB = s.transceivers.first { $0.mid == screenMid }?.received
            return (screenAtB?.framesDecoded ?? 0) >= 5 && screenAtB?.width == 640
        }
        let cameraBefore = await b.statistics().transceiver(.video)?.received?.framesDecoded ?? 0

        // B re-offers (nothing new): A answers, media goes on.
        try await a.setRemoteDescription(try await b.createOffer(), type: .offer)
        try await b.setRemoteDescription(try await a.createAnswer(), type: .answer)
        try await until("B's camera view keeps moving after B's re-offer") {
            (await b.statistics().transceiver(.video)?.received?.framesDecoded ?? 0) > cameraBefore + 5
        }

        // A stops sharing: the screen section becomes inactive and B's decoder for it goes.
        await a.setDirection(.inactive, of: screen)
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        let screenAtB = try #require(await b.allTransceivers.first { $0.mid == screenMid })
        #expect(screenAtB.negotiated?.direction == .inactive)
        #expect(await b.statistics().transceivers.first { $0.mid == screenMid }?.received == nil)
        #expect(a.state == .connected && b.state == .connected)

        // A glare: both offer; B (the larger id) rolls back and answers A's.
        _ = try await b.createOffer()
        let glare = try await a.createOffer()
        await #expect(throws: PeerConnectionError.self) { try await b.setRemoteDescription(glare, type: .offer) }
        await b.rollback()
        try await b.setRemoteDescription(glare, type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        #expect(a.state == .connected && b.state == .connected)

        await a.close()
        await b.close()
    }

    /// Two connections made anew at the same moment (both failed, both renew): the two first
    /// offers cross, B (the larger id) rolls its back and answers A's. B's own audio and camera
    /// must go onto A's offer's sections, not stay on transceivers the rollback left without a
    /// section (Chromium's addTransceiver ones do: the browser client stops those, see room.js
    /// attachLocal), so each decodes the other's camera.
    @Test func freshConnectionsWhoseFirstOffersCrossCarryBothCameras() async throws {
        let loop = GLibLoop(name: "pc-fresh-glare")
        defer { loop.stop() }
        let a = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        var cameras: [Transceiver] = []
        for pc in [a, b] {
            _ = try await pc.addTransceiver(kind: .audio, direction: .sendrecv)
            cameras.append(try await pc.addTransceiver(kind: .video, direction: .sendrecv, trackID: "camera"))
        }
        _ = try await b.createOffer()
        let offer = try await a.createOffer()
        await b.rollback()
        try await b.setRemoteDescription(offer, type: .offer)
        let answer = try await b.createAnswer()
        try await a.setRemoteDescription(answer, type: .answer)
        #expect(await b.allTransceivers.count == 2, "B's own two took A's sections; none was added beside them")
        #expect(cameras[1].mid != nil && cameras[1].mid == cameras[0].mid)
        #expect(cameras[1].negotiated?.direction == .sendrecv, "B sends its camera on A's camera section")
        for (pc, camera) in zip([a, b], cameras) {
            try await pc.attachVideoSource(
                SyntheticScreenSource(width: 320, height: 180, framesPerSecond: 15), to: camera,
                bitrate: 300_000, framesPerSecond: 15, policy: .detail)
        }
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()
        try await until("each decodes the other's camera") {
            let sa = await a.statistics(), sb = await b.statistics()
            return [sa, sb].allSatisfy { ($0.transceiver(.video)?.received?.framesDecoded ?? 0) >= 5 }
        }
        await a.close()
        await b.close()
    }

    /// A screen stopped and shared again on its old section keeps its SSRC, so its sender must
    /// carry on numbering where the last one stopped: a new random start falls behind the old one
    /// about half the time, and SRTP refuses every packet of such a stream (the viewer saw nothing
    /// until a rebuild). Four rounds make a random start fail this with 15 chances in 16.
    @Test func aScreenSharedAgainOnItsOldSectionReachesTheViewerEveryTime() async throws {
        let loop = GLibLoop(name: "pc-reshare")
        defer { loop.stop() }
        let a = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let screen = try await a.addTransceiver(kind: .video, direction: .sendonly, trackID: "screen")
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        try await a.waitUntilConnected()
        let mid = try #require(screen.mid)
        for round in 0..<5 {
            if round > 0 {
                await a.setDirection(.inactive, of: screen)
                try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
                try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
                await a.setDirection(.sendonly, of: screen)
                try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
                try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
                #expect(screen.mid == mid, "the same section is used again")
            }
            try await a.attachVideoSource(
                SyntheticScreenSource(width: 320, height: 180, framesPerSecond: 15), to: screen,
                bitrate: 300_000, framesPerSecond: 15, policy: .detail)
            try await until("B decodes A's screen in round \(round)") {
                (await b.statistics().transceivers.first { $0.mid == mid }?.received?.framesDecoded ?? 0) >= 5
            }
        }
        await a.close()
        await b.close()
    }
}
