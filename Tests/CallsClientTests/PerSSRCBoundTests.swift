@testable import CallsClient
import RTPWire
import Testing
@testable import CallMedia
@testable import WebRTCTransport

/// A peer may send from as many SSRCs as it likes; what the receive path keeps per SSRC is bounded
/// (`perConnectionSSRCs`), the least recently seen stream going first.
@Suite struct PerSSRCBoundTests {
    /// A flood of SSRCs, each routed by payload type: the router learns at most 32, and the
    /// stream it still sees is not the one forgotten.
    @Test func theRouterLearnsAtMostThirtyTwoStreams() throws {
        var router = RTPRouter(
            entries: [.init(index: 0, mid: "0", payloadType: 96, rtxPayloadType: nil, ssrc: nil, rtxSSRC: nil)],
            midExtensionID: nil)
        func packet(_ ssrc: UInt32) throws -> RTPPacket { try RTPPacket.parse(rtpPacket(sequence: 1, ssrc: ssrc)) }
        for ssrc in UInt32(1000)..<2000 {
            #expect(router.route(try packet(ssrc))?.index == 0)
            #expect(router.route(try packet(7))?.index == 0)
        }
        #expect(router.learnedCount == RTPRouter.perConnectionSSRCs)
        let followed = RTPRouter(entries: [], midExtensionID: nil).following(router)
        #expect(followed.learnedCount == 0, "a section that no longer receives keeps no route")
        var next = RTPRouter(
            entries: [.init(index: 0, mid: "0", payloadType: 96, rtxPayloadType: nil, ssrc: nil, rtxSSRC: nil)],
            midExtensionID: nil
        ).following(followed)
        #expect(next.route(try packet(7)) == nil, "retired: not taken by the payload type")
    }

    /// libsrtp makes a stream (replay window, keys) for every SSRC it authenticates. After 40 other
    /// SSRCs the first one's stream was evicted: the same packet again starts a fresh stream
    /// instead of being refused as a replay. A stream kept in use is not evicted.
    @Test func srtpForgetsTheLeastRecentlySeenStream() throws {
        let keys = try countingKeys(.aes128CMHMACSHA1_80)
        let sender = try SRTPSession(keys: keys, role: .client)
        let receiver = try SRTPSession(keys: keys, role: .server)
        let first = try sender.protect(rtp: rtpPacket(sequence: 1, ssrc: 1))
        var kept = 2
        _ = try receiver.unprotect(srtp: first)
        #expect(throws: SRTPError.replayed) { try receiver.unprotect(srtp: first) }
        let busy = 0xB0B
        for ssrc in 100..<140 {
            _ = try receiver.unprotect(srtp: try sender.protect(rtp: rtpPacket(sequence: 1, ssrc: UInt32(ssrc))))
            _ = try receiver.unprotect(
                srtp: try sender.protect(rtp: rtpPacket(sequence: UInt16(kept), ssrc: UInt32(busy))))
            kept += 1
        }
        _ = try receiver.unprotect(srtp: first)  // a fresh stream: not a replay
        let busyAgain = try sender.protect(rtp: rtpPacket(sequence: UInt16(kept - 1), ssrc: UInt32(busy)))
        #expect(throws: SRTPError.replayed) { try receiver.unprotect(srtp: busyAgain) }
    }
}
