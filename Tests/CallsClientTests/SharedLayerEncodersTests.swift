import ScreenCapture
import ShareCore
import TestSupport
import Testing
import VideoSend
@testable import CallMedia
@testable import RTPWire

/// A mesh's shared layer encoders with real encoders (libvpx) and a synthetic screen: each
/// connection's stream carries the layer its estimate carries, from that layer's keyframe on; a
/// keyframe request reaches its own layer only; a layer no one is sent does not run.
@Suite(.serialized) struct SharedLayerEncodersTests {
    /// What one connection's stream wrote: RTP packets, in order.
    final class Stream: Sendable {
        let packets = Locked<[RTPPacket]>([])
        let sender: RTPStreamSender
        let tap: SharedLayerTap

        init(ssrc: UInt32, allocation: SimulcastAllocation) {
            let packets = self.packets
            sender = RTPStreamSender(
                configuration: .init(ssrc: ssrc, payloadType: 96, clockRate: 90_000, rtx: (ssrc + 1, 97))
            ) { packet, _ in
                packets.withLock { $0.append(packet.packet) }
                return true
            }
            tap = SharedLayerTap(
                sender: sender, codec: .vp8, allocation: allocation, startBitrate: 300_000,
                response: KeyframeResponse(), logger: Logger(label: "test", level: .error))
        }

        var framesSent: Int { sender.counters.framesSent }
        /// RTP timestamps of the frames (marker packets), in the order sent.
        var frameTimestamps: [UInt32] { packets.withLock { $0.filter(\.marker).map(\.timestamp) } }
    }

    func encoders(dedicatedMicros: Int64 = 30_000_000) -> SharedLayerEncoders {
        SharedLayerEncoders(
            codec: .vp8, source: SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 30),
            maxBitrate: 1_500_000, framesPerSecond: 30, maxLongSide: 1920, policy: .balanced,
            logger: Logger(label: "test", level: .error), dedicatedMicros: dedicatedMicros)
    }

    /// Two connections: one whose estimate carries the full size (SSRC 10), one only the quarter
    /// (SSRC 20).
    func wideAndNarrow(_ shared: SharedLayerEncoders) -> (wide: Stream, narrow: Stream) {
        let wide = Stream(ssrc: 10, allocation: shared.allocation)
        let narrow = Stream(ssrc: 20, allocation: shared.allocation)
        shared.add(wide.tap)
        shared.add(narrow.tap)
        shared.setTarget(1_200_000, of: wide.tap)
        shared.setTarget(100_000, of: narrow.tap)
        return (wide, narrow)
    }

    @Test func eachConnectionIsSentTheLayerItsEstimateCarries() async throws {
        let shared = encoders()
        defer { shared.stop() }
        let (wide, narrow) = wideAndNarrow(shared)
        try await until("both streams carry frames") { wide.framesSent >= 10 && narrow.framesSent >= 10 }
        #expect(wide.tap.layer == 0 && narrow.tap.layer == 2)
        // The full size and the quarter run; the half size, which no one is sent, does not.
        #expect(shared.encoders.map(\.isActive) == [true, false, true])
        // Each layer's size is its rung: judged by what its frames spend, not the quantizer band.
        #expect(shared.encoders.allSatisfy { !$0.sizesByQuantizer })
        #expect(
            shared.encoders[0].counters.width == 640 && shared.encoders[2].counters.width == 160,
            "widths \(shared.encoders.map(\.counters.width))")
        // Each layer runs at the least estimate of those it goes to, within its maximum and what
        // its size may spend.
        // (a layer's encoder takes a new target with its next frame: on a busy machine that can
        // come after the tenth frame of the start rate)
        #expect(shared.encoders[2].counters.targetBitrate <= 100_000)
        try await until("the full size runs at the wide estimate") {
            shared.encoders[0].counters.targetBitrate > 500_000
        }
        // Two streams of their own: their own sequence numbers, SSRCs, media time forward.
        #expect(wide.packets.withLock { $0.allSatisfy { $0.ssrc == 10 } })
        #expect(narrow.packets.withLock { $0.allSatisfy { $0.ssrc == 20 } })
        for stream in [wide, narrow] {
            let stamps = stream.frameTimestamps
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { Int32(bitPattern: $1 &- $0) > 0 })
        }
    }

    @Test func aKeyframeRequestReachesOnlyItsConnectionsLayer() async throws {
        let shared = encoders()
        defer { shared.stop() }
        let (wide, narrow) = wideAndNarrow(shared)
        try await until("both streams carry frames") { wide.framesSent >= 5 && narrow.framesSent >= 5 }
        let before = shared.encoders.map(\.counters.keyframeRequests)
        shared.requestKeyframe(for: narrow.tap)
        #expect(shared.encoders.map(\.counters.keyframeRequests) == [before[0], before[1], before[2] + 1])
    }

    /// A connection whose estimate rises moves up at the new layer's keyframe (in its start-up,
    /// without the hold); the layer it left, sent to no one now, stops.
    @Test func aConnectionMovesUpAtTheNewLayersKeyframe() async throws {
        let shared = encoders()
        defer { shared.stop() }
        let stream = Stream(ssrc: 10, allocation: shared.allocation)
        shared.add(stream.tap)
        shared.setTarget(200_000, of: stream.tap)
        try await until("the half size goes out") { stream.tap.layer == 1 && stream.framesSent >= 3 }
        let fullKeyframes = shared.encoders[0].counters.keyframes
        shared.setTarget(1_200_000, of: stream.tap)
        try await until("the full size goes out") { stream.tap.layer == 0 }
        #expect(shared.encoders[0].counters.keyframes > fullKeyframes, "it moved at a keyframe of the full size")
        // the half size is switched off once the switch is done, on its own thread
        try await until("the half size, sent to no one now, stops") {
            shared.encoders.map(\.isActive) == [true, false, false]
        }
        shared.remove(stream.tap)
        #expect(shared.encoders.map(\.isActive) == [false, false, false])
    }

    /// A receiver whose keyframe did not get through is sent the layer below (a smaller keyframe).
    @Test func aKeyframeThatDidNotGetThroughMovesItsConnectionDown() async throws {
        let shared = encoders()
        defer { shared.stop() }
        let stream = Stream(ssrc: 10, allocation: shared.allocation)
        shared.add(stream.tap)
        shared.setTarget(1_200_000, of: stream.tap)
        try await until("the full size goes out") { stream.tap.layer == 0 && stream.framesSent >= 3 }
        shared.keyframeDidNotGetThrough(for: stream.tap)
        try await until("the half size goes out") { stream.tap.layer == 1 }
        #expect(shared.encoders[1].isActive)
    }

    /// A rebuild for one person: an encoder of their own (here at two thirds of the size), sent
    /// from its first keyframe, while the other connection on the same layer keeps the shared one
    /// untouched (no fresh encoder there); gone with the connection.
    @Test func aFreshEncoderForOnePersonLeavesTheOthersOnTheLayer() async throws {
        let shared = encoders()
        defer { shared.stop() }
        let ann = Stream(ssrc: 10, allocation: shared.allocation)
        let ben = Stream(ssrc: 20, allocation: shared.allocation)
        for stream in [ann, ben] {
            shared.add(stream.tap)
            shared.setTarget(1_200_000, of: stream.tap)
        }
        try await until("both on the full size") {
            ann.tap.layer == 0 && ben.tap.layer == 0 && ann.framesSent >= 3 && ben.framesSent >= 3
        }
        let made = shared.encoders[0].counters.encodersMade
        shared.dedicate(ann.tap, scale: 2.0 / 3, forSeconds: 5)
        try await until("Ann is sent her own encoder's frames") { ann.tap.layer == SharedLayerTap.dedicatedLayer }
        let own = try #require(shared.encoder(for: ann.tap))
        #expect(own !== shared.encoders[0] && own.sizesByQuantizer)
        let annBefore = ann.framesSent
        let benBefore = ben.framesSent
        try await until("both go on") { ann.framesSent >= annBefore + 5 && ben.framesSent >= benBefore + 5 }
        // Made at two thirds of the full size's picture; the shared full size goes on as it was.
        #expect(own.counters.width > 0 && own.counters.width < 640)
        #expect(shared.encoders[0].counters.encodersMade == made && shared.encoders[0].counters.width == 640)
        #expect(shared.encoder(for: ben.tap) === shared.encoders[0])
        // A keyframe request for Ann reaches her own encoder, not the layer.
        let layerAsked = shared.encoders[0].counters.keyframeRequests
        shared.requestKeyframe(for: ann.tap)
        #expect(own.counters.keyframeRequests >= 1 && shared.encoders[0].counters.keyframeRequests == layerAsked)
        shared.release(ann.tap)
        try await until("her encoder stops with her connection") { !own.isRunning }
    }

    /// When its time is up the connection goes back to its layer, at that layer's keyframe, and its
    /// own encoder stops.
    @Test func aDedicatedEncoderEndsWithItsTime() async throws {
        let shared = encoders(dedicatedMicros: 1_000_000)
        defer { shared.stop() }
        let ann = Stream(ssrc: 10, allocation: shared.allocation)
        shared.add(ann.tap)
        shared.setTarget(1_200_000, of: ann.tap)
        try await until("on the full size") { ann.tap.layer == 0 && ann.framesSent >= 3 }
        shared.dedicate(ann.tap, scale: 1, forSeconds: 0)
        try await until("on her own encoder") { ann.tap.layer == SharedLayerTap.dedicatedLayer }
        let own = try #require(shared.encoder(for: ann.tap))
        // The estimate arrives as it does from congestion control: each change a rebalance.
        try await until("back on the full size") {
            shared.setTarget(1_200_000, of: ann.tap)
            return ann.tap.layer == 0
        }
        try await until("her own encoder stopped") {
            shared.setTarget(1_200_000, of: ann.tap)
            return !own.isRunning
        }
        #expect(shared.encoder(for: ann.tap) === shared.encoders[0])
    }
}
