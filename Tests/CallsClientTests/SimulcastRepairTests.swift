import RTPWire
import ShareCore
import Testing
import VideoSend
@testable import CallMedia

/// A simulcast screen's repair: each layer is its own stream, so a NACK or PLI goes to the layer
/// whose SSRC it names, and a layer's retransmissions carry its RID as the repaired RID (RFC 8852).
@Suite struct SimulcastRepairTests {
    /// Three layers writing RTP to `wire`: ssrc 10/11 (h), 20/21 (m), 30/31 (l), RID ids 4 and 5.
    static func layers(_ wire: Locked<[[UInt8]]>) -> [RTPStreamSender] {
        ["h", "m", "l"].enumerated().map { index, rid in
            let base = UInt32(10 * (index + 1))
            return RTPStreamSender(
                configuration: .init(
                    ssrc: base, payloadType: 96, clockRate: 90_000, rtx: (base + 1, 97),
                    extensions: SendExtensions(mid: (1, "0"), rid: (4, rid), repairedRID: (5, rid))),
                transportSequence: nil
            ) { bytes in
                wire.withLock { $0.append(bytes) }
                return true
            }
        }
    }

    static func text(_ packet: RTPPacket, id: UInt8) -> String? {
        (try? packet.headerExtensionElements())?.first { $0.id == id }.map { String(decoding: $0.data, as: UTF8.self) }
    }

    @Test func aNACKIsAnsweredOnTheLayerItNames() throws {
        let wire = Locked<[[UInt8]]>([])
        let senders = Self.layers(wire)
        for sender in senders {
            sender.send([RTPPayloadUnit(payload: [1, 2, 3], marker: true)], timestamp: 0, nowMicros: 0)
        }
        let sent = try wire.withLock { $0 }.map { try RTPPacket.parse($0) }
        #expect(sent.map(\.ssrc) == [10, 20, 30])
        #expect(sent.map { Self.text($0, id: 4) } == ["h", "m", "l"] && sent.allSatisfy { Self.text($0, id: 5) == nil })
        let rtcp = RTCPReceiver(video: senders, audioSSRC: nil) { _, _ in }
        let middle = sent[1]
        rtcp.receive(
            try GenericNACK(senderSSRC: 1, mediaSSRC: 20, lostSequenceNumbers: [middle.sequenceNumber]).serialize(),
            nowMicros: 100_000)
        let resent = try RTPPacket.parse(try #require(wire.withLock { $0 }.last))
        #expect(wire.withLock { $0 }.count == 4 && resent.ssrc == 21)
        #expect(Self.text(resent, id: 5) == "m" && Self.text(resent, id: 4) == nil)
        #expect(senders.map(\.counters.rtxPacketsSent) == [0, 1, 0])
        // A NACK naming a layer's RTX SSRC, or no layer, is not ours to answer.
        rtcp.receive(
            try GenericNACK(senderSSRC: 1, mediaSSRC: 21, lostSequenceNumbers: [middle.sequenceNumber]).serialize(),
            nowMicros: 200_000)
        rtcp.receive(
            try GenericNACK(senderSSRC: 1, mediaSSRC: 99, lostSequenceNumbers: [1]).serialize(), nowMicros: 300_000)
        #expect(wire.withLock { $0 }.count == 4 && rtcp.figures.nacks == 1)
    }

    /// A PLI asks its own layer for a keyframe, within that layer's own 300 ms: requests for two
    /// layers at once are both answered.
    @Test func aPLIAsksItsOwnLayer() {
        let asks = Locked<[Int]>([])
        let rtcp = RTCPReceiver(video: Self.layers(Locked([])), audioSSRC: nil) { _, layer in
            asks.withLock { $0.append(layer) }
        }
        rtcp.receive(PictureLossIndication(senderSSRC: 1, mediaSSRC: 30).serialize(), nowMicros: 0)
        rtcp.receive(PictureLossIndication(senderSSRC: 1, mediaSSRC: 10).serialize(), nowMicros: 1_000)
        rtcp.receive(PictureLossIndication(senderSSRC: 1, mediaSSRC: 30).serialize(), nowMicros: 100_000)
        rtcp.receive(PictureLossIndication(senderSSRC: 1, mediaSSRC: 30).serialize(), nowMicros: 400_000)
        #expect(asks.withLock { $0 } == [2, 0, 2])
    }

    /// The receiver's first report asks every layer for a keyframe.
    @Test func theFirstReportAsksEveryLayer() throws {
        let asks = Locked<[Int]>([])
        let rtcp = RTCPReceiver(video: Self.layers(Locked([])), audioSSRC: nil) { _, layer in
            asks.withLock { $0.append(layer) }
        }
        let report = try RTCPCompound.serialize([
            .receiverReport(
                ReceiverReport(ssrc: 1, reports: [ReceptionReport(ssrc: 20, extendedHighestSequenceNumber: 5)]))
        ])
        rtcp.receive(report, nowMicros: 0)
        #expect(asks.withLock { $0 } == [0, 1, 2])
    }
}
