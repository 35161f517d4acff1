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

/// Two real peer connections in one process on 127.0.0.1 (libnice, OpenSSL DTLS, libsrtp2, x264 or
/// libvpx, libavcodec, libopus). Timeouts only guard against hangs; nothing asserts how long a
/// step took.
@Suite struct PeerConnectionTests {
    @Test(arguments: [VideoCodec.h264, .vp8])
    func sendonlyOfferToRecvonlyAnswerDecodesVideoAndAudio(codec: VideoCodec) async throws {
        let loop = GLibLoop(name: "pc-\(codec.rawValue.lowercased())")
        defer { loop.stop() }
        var offerer = PeerConnection.Configuration(loopbackOnly: true)
        offerer.capabilities.videoCodecs = [codec == .h264 ? .h264 : .vp8]
        let a = try PeerConnection(loop: loop, configuration: offerer, logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let statesOfA = StateLog(a.stateChanges)
        let video = try await a.addTransceiver(kind: .video, direction: .sendonly)
        let audio = try await a.addTransceiver(kind: .audio, direction: .sendonly)
        let videoB = try await b.addTransceiver(kind: .video, direction: .recvonly)
        let audioB = try await b.addTransceiver(kind: .audio, direction: .recvonly)

        let offer = try await a.createOffer()
        #expect(offer.contains("a=setup:actpass"))
        #expect(offer.contains("a=fingerprint:\(a.fingerprint.sdpValue)"))
        #expect(offer.contains("typ host") && offer.contains("a=end-of-candidates"))
        try await b.setRemoteDescription(offer, type: .offer)
        let answer = try await b.createAnswer()
        #expect(answer.contains("a=setup:active"), "we answer as the DTLS client")
        #expect(answer.contains("a=recvonly"))
        try await a.setRemoteDescription(answer, type: .answer)

        // What the exchange settled, on both sides.
        let sent = try #require(video.negotiated)
        #expect(sent.direction == .sendonly && sent.videoCodec == codec && sent.rtxPayloadType != nil)
        let ssrcs = try #require(video.sendSSRCs)
        #expect(ssrcs.rtx != nil)
        #expect(sent.extensions.mid != nil && sent.extensions.transportSequence != nil)
        let received = try #require(videoB.negotiated)
        #expect(received.direction == .recvonly && received.videoCodec == codec)
        #expect(received.payloadType == sent.payloadType && received.mid == sent.mid)
        #expect(received.remoteSSRC == ssrcs.ssrc && received.remoteRTXSSRC == ssrcs.rtx)
        #expect(videoB.sendSSRCs == nil)
        #expect(audio.negotiated?.codec == .opus && audioB.negotiated?.direction == .recvonly)

        try await a.attachVideoSource(
            SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 30), to: video,
            bitrate: 1_000_000, framesPerSecond: 30,
            policy: .detail)  // a fixed size even on a busy machine
        try await a.attachAudioTone(to: audio, toneLevelDbfs: -20)
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()

        // Until B decoded 20 frames and some audio and A heard B's receiver reports (a hang guard:
        // when it runs out, the expectations below say what was missing).
        var bStats = await b.statistics(), aStats = await a.statistics()
        try? await until("B decodes and A hears B's reports") {
            bStats = await b.statistics()
            aStats = await a.statistics()
            let v = bStats.transceiver(.video)?.received, s = bStats.transceiver(.audio)?.received
            return (v?.framesDecoded ?? 0) >= 20 && (s?.audioFramesDecoded ?? 0) >= 10 && aStats.transport.rttMs != nil
                && aStats.transceiver(.video)?.feedback?.rttMs != nil
                && (aStats.congestion?.estimate.packetsReported ?? 0) > 100
        }
        let decodedVideo = try #require(bStats.transceiver(.video)?.received)
        #expect(decodedVideo.framesDecoded >= 20, "\(decodedVideo)")
        #expect(decodedVideo.width == 640 && decodedVideo.height == 360, "decoded at the sent size")
        #expect(decodedVideo.keyframesDecoded >= 1 && decodedVideo.decodeErrors == 0)
        #expect(decodedVideo.packets > 0 && decodedVideo.receiverReportsSent > 0)
        let decodedAudio = try #require(bStats.transceiver(.audio)?.received)
        #expect(decodedAudio.audioFramesDecoded >= 10)
        #expect((decodedAudio.audioPeakDbfs ?? -120) > -40, "the −20 dBFS tone arrives above −40 dBFS")
        #expect(bStats.transport.receiverReportsSent > 0 && bStats.transport.rtpUnrouted == 0)

        let sentVideo = try #require(aStats.transceiver(.video))
        #expect((sentVideo.sent?.framesEncoded ?? 0) >= 20 && sentVideo.sent?.width == 640)
        #expect(sentVideo.received == nil, "a sendonly transceiver receives nothing")
        #expect(
            sentVideo.feedback?.rttMs != nil,
            "A's RTCP receiver saw B's receiver reports: \(String(describing: sentVideo.feedback))")
        #expect(aStats.transport.srtpProfile != nil)
        // B's transport-wide feedback reached A's estimate; A's packets went through its pacer.
        let congestion = try #require(aStats.congestion)
        #expect(congestion.estimate.feedbackMessages > 0 && congestion.estimate.packetsReported > 100, "\(congestion)")
        #expect(congestion.estimate.acknowledgedBitrate != nil)
        #expect(congestion.pacer.counters.released > 0 && congestion.pacer.sendFailures == 0)
        #expect(
            congestion.targetBitrate >= 100_000 && congestion.targetBitrate <= 1_040_000,
            "within the minimum and the 1 Mbit/s video + audio maximum: \(congestion.targetBitrate)")
        #expect(aStats.transport.selectedPair?.contains("127.0.0.1") == true)

        await a.close()
        await b.close()
        #expect(a.state == .closed && b.state == .closed)
        let seen = await statesOfA.finished()
        #expect(seen == [.connecting, .connected, .closed], "\(seen)")
    }
}

/// Every state a connection went through, read from its stream until it ends.
final class StateLog: Sendable {
    private let task: Task<[PeerConnection.State], Never>

    init(_ stream: AsyncStream<PeerConnection.State>) {
        task = Task {
            var seen: [PeerConnection.State] = []
            for await state in stream { seen.append(state) }
            return seen
        }
    }

    func finished() async -> [PeerConnection.State] { await task.value }
}
