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

    func encoders() -> SharedLayerEncoders {
        SharedLayerEncoders(
            codec: .vp8, source: SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 30),
            maxBitrate: 1_500_000, framesPerSecond: 30, maxLongSide: 1920, policy: .balanced,
            logger: Logger(label: "test", level: .error))
    }

    @Test func eachConnectionIsSentTheLayerItsEstimateCarries() async throws {
        let shared = encoders()
        defer { shared.stop() }
        let wide = Stream(ssrc: 10, allocation: shared.allocation)
        let narrow = Stream(ssrc: 20, allocation: shared.allocation)
        shared.add(wide.tap)
        shared.add(narrow.tap)
        shared.setTarget(1_200_000, of: wide.tap)
        shared.setTarget(100_000, of: narrow.tap)
        try await until("both streams carry frames") { wide.framesSent >= 10 && narrow.framesSent >= 10 }
        #expect(wide.tap.layer == 0 && narrow.tap.layer == 2)
        // The full size and the quarter run; the half size, which no one is sent, does not.
        #expect(shared.encoders.map(\.isActive) == [true, false, true])
        #expect(shared.encoders[0].counters.width == 640 && shared.encoders[2].counters.width == 160)
        // Each layer runs at the least estimate of those it goes to, within its maximum and what
        // its size may spend.
        #expect(shared.encoders[2].counters.targetBitrate <= 100_000)
        #expect(shared.encoders[0].counters.targetBitrate > 500_000)
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
        let wide = Stream(ssrc: 10, allocation: shared.allocation)
        let narrow = Stream(ssrc: 20, allocation: shared.allocation)
        shared.add(wide.tap)
        shared.add(narrow.tap)
        shared.setTarget(1_200_000, of: wide.tap)
        shared.setTarget(100_000, of: narrow.tap)
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
        #expect(shared.encoders.map(\.isActive) == [true, false, false])
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
}
