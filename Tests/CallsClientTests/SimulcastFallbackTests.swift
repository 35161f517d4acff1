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

/// A simulcast offer to a peer that does not take simulcast (sharectl's own answerer, as aiortc
/// and many WHIP endpoints): the answer has no `a=simulcast:recv`, so one stream goes out, on the
/// SSRC the offer named first, and the peer decodes it at the full size.
@Suite struct SimulcastFallbackTests {
    @Test func anAnswerWithoutSimulcastGetsOneStream() async throws {
        let loop = GLibLoop(name: "pc-simulcast")
        defer { loop.stop() }
        var configuration = PeerConnection.Configuration(loopbackOnly: true)
        configuration.capabilities.videoCodecs = [.vp8]
        let a = try PeerConnection(loop: loop, configuration: configuration, logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let video = try await a.addTransceiver(kind: .video, direction: .sendonly, simulcast: Transceiver.screenLayers)
        try await b.addTransceiver(kind: .video, direction: .recvonly)
        let offer = try await a.createOffer()
        #expect(offer.contains("a=simulcast:send h;m;l") && offer.contains("a=rid:l send"))
        #expect(!offer.contains("a=ssrc:"), "a simulcast offer names its layers by RID, not SSRC")
        try await b.setRemoteDescription(offer, type: .offer)
        let answer = try await b.createAnswer()
        #expect(!answer.contains("a=simulcast"))
        try await a.setRemoteDescription(answer, type: .answer)
        let negotiated = try #require(video.negotiated)
        #expect(negotiated.simulcastRIDs.isEmpty && video.simulcastRIDs == ["h", "m", "l"])

        try await a.attachVideoSource(
            SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 30), to: video, bitrate: 1_000_000,
            policy: .detail)
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()
        var decoded = 0, width = 0
        try? await until("B decodes 10 frames") {
            let received = await b.statistics().transceiver(.video)?.received
            decoded = received?.framesDecoded ?? 0
            width = received?.width ?? 0
            return decoded >= 10
        }
        let sent = try #require(await a.statistics().transceiver(.video)?.sent)
        #expect(decoded >= 10 && width == 640, "decoded \(decoded) at \(width) wide")
        #expect(sent.layers.isEmpty && sent.framesEncoded >= 10)
        await a.close()
        await b.close()
    }
}
