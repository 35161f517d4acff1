import RTPWire
import ShareCore
import Testing
import VideoSend

@Suite struct RetransmissionHistoryTests {
    func packet(_ sequence: UInt16) -> RTPPacket {
        RTPPacket(payloadType: 96, sequenceNumber: sequence, timestamp: 0, ssrc: 1, payload: [UInt8(sequence & 0xFF)])
    }

    @Test func resendsWhatItHoldsWithinRetentionOncePerInterval() {
        let history = RetransmissionHistory(capacity: 64, retentionMicros: 1_000_000, minResendIntervalMicros: 20_000)
        for n in UInt16(65530)...UInt16(65535) { history.store(packet(n), sentMicros: 0) }
        for n in UInt16(0)..<4 { history.store(packet(n), sentMicros: 0) }
        // Across the wrap, with one never sent (100) and one asked twice.
        let first = history.packetsToResend(for: [65534, 1, 100, 1], now: 500_000)
        #expect(first.map(\.sequenceNumber) == [65534, 1])
        #expect(history.packetsToResend(for: [1], now: 510_000).isEmpty, "resent 10 ms ago: not again yet")
        #expect(history.packetsToResend(for: [1], now: 530_000).map(\.sequenceNumber) == [1])
        #expect(history.packetsToResend(for: [2], now: 1_000_001).isEmpty, "older than the retention")
        let counters = history.counters
        #expect(counters.retransmitted == 3 && counters.missing == 2 && counters.nacksReceived == 4)
    }

    @Test func aSlotReusedByANewerPacketIsNotConfusedWithTheOld() {
        let history = RetransmissionHistory(capacity: 4)
        history.store(packet(1), sentMicros: 0)
        history.store(packet(5), sentMicros: 0)  // same slot as 1
        #expect(history.packetsToResend(for: [1], now: 0).isEmpty)
        #expect(history.packetsToResend(for: [5], now: 0).map(\.sequenceNumber) == [5])
    }
}

/// The default history and the sender's NACK answer, as a call uses them.
@Suite struct RetransmissionDefaultsTests {
    /// 300 packets a second is a 2.5 Mbit/s stream of ~1 kB packets: a packet a second old is
    /// still there (RFC 4588 repair needs at least a round trip plus the receiver's wait).
    @Test func theDefaultHistoryHoldsMoreThanASecondOfA2500kbitStream() {
        let history = RetransmissionHistory()
        for i in 0..<450 {
            let packet = RTPPacket(
                marker: false, payloadType: 96, sequenceNumber: UInt16(i), timestamp: 0, ssrc: 1, payload: [0])
            history.store(packet, sentMicros: Int64(i) * 1_000_000 / 300)
        }
        let now: Int64 = 1_500_000
        // Packet 0 left 1.5 s ago, packet 30 1.4 s ago, packet 150 1.0 s ago.
        #expect(history.packetsToResend(for: [150], now: now).map(\.sequenceNumber) == [150])
        #expect(history.packetsToResend(for: [30], now: now).map(\.sequenceNumber) == [30])
    }

    @Test func aNACKIsAnsweredOnTheRTXStreamAheadOfVideo() throws {
        let written = Locked<[OutgoingPacket]>([])
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 1, payloadType: 96, clockRate: 90_000, rtx: (ssrc: 2, payloadType: 97)),
            firstSequence: 100
        ) { packet, _ in
            written.withLock { $0.append(packet) }; return true
        }
        sender.send([RTPPayloadUnit(payload: [1, 2, 3], marker: true)], timestamp: 9, nowMicros: 0)
        #expect(sender.retransmit([100, 101], nowMicros: 50_000) == 1, "101 was never sent")
        let packets = written.withLock { $0 }
        #expect(packets.map(\.priority) == [.video, .retransmission])
        let rtx = try #require(packets.last?.packet)
        #expect(rtx.ssrc == 2 && rtx.payloadType == 97)
        #expect(Array(rtx.payload.prefix(2)) == [0, 100], "the original sequence number leads the RTX payload")
        #expect(sender.counters.rtxPacketsSent == 1 && sender.counters.nacksReceived == 1)
    }
}

extension RetransmissionHistoryTests {
    /// Padding for a probe: padding-only packets on the RTX stream, numbered after its
    /// retransmissions, with the last media timestamp; none without RTX.
    @Test func paddingIsPaddingOnlyPacketsOnTheRTXStream() throws {
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 1, payloadType: 96, clockRate: 90_000, rtx: (ssrc: 2, payloadType: 97)),
            firstSequence: 100, firstRTXSequence: 500
        ) { _, _ in true }
        sender.send([RTPPayloadUnit(payload: [1, 2, 3], marker: true)], timestamp: 9, nowMicros: 0)
        let padding = sender.paddingPackets(bytes: 1000)
        #expect(padding.count == 4)
        #expect(padding.map(\.packet.sequenceNumber) == [500, 501, 502, 503])
        let total = padding.reduce(0) { $0 + $1.size }
        #expect(total >= 1000 && total < 1000 + 12 + 24 + 255)
        for outgoing in padding {
            let parsed = try RTPPacket.parse(try outgoing.packet.serialize())
            #expect(parsed.ssrc == 2 && parsed.payloadType == 97 && parsed.timestamp == 9)
            #expect(parsed.payload.isEmpty && parsed.paddingSize > 0)
        }
        #expect(sender.counters.paddingPacketsSent == 4 && sender.counters.paddingBytesSent == total)
        #expect(sender.counters.rtxPacketsSent == 0, "padding is not counted as retransmission")
        // The next retransmission continues the RTX numbering.
        #expect(sender.retransmit([100], nowMicros: 50_000) == 1)
        #expect(sender.nextSequenceNumbers.rtx == 505)

        let plain = RTPStreamSender(configuration: .init(ssrc: 3, payloadType: 96, clockRate: 90_000)) { _, _ in true }
        #expect(plain.paddingPackets(bytes: 1000).isEmpty)
    }

    /// Padding goes on the stream with RTX that sent media last: never on one that has sent none
    /// (a simulcast layer that is off), nor on one without RTX.
    @Test func paddingGoesOnTheRTXStreamThatSentMediaLast() {
        func stream(_ ssrc: UInt32, rtx: Bool = true) -> RTPStreamSender {
            RTPStreamSender(
                configuration: .init(
                    ssrc: ssrc, payloadType: 96, clockRate: 90_000, rtx: rtx ? (ssrc: ssrc + 100, payloadType: 97) : nil
                )
            ) { _, _ in true }
        }
        let high = stream(1), middle = stream(2), low = stream(3), plain = stream(4, rtx: false)
        let layers = [high, middle, low, plain]
        #expect(RTPStreamSender.paddingStream(among: layers) == nil, "no stream has sent media yet")
        let unit = [RTPPayloadUnit(payload: [1, 2, 3], marker: true)]
        plain.send(unit, timestamp: 1, nowMicros: 5_000)
        #expect(RTPStreamSender.paddingStream(among: layers) == nil, "the only stream that sent has no RTX")
        low.send(unit, timestamp: 1, nowMicros: 1_000)
        #expect(RTPStreamSender.paddingStream(among: layers) === low, "the high layer is off: never padded")
        middle.send(unit, timestamp: 1, nowMicros: 2_000)
        #expect(RTPStreamSender.paddingStream(among: layers) === middle)
        low.send(unit, timestamp: 2, nowMicros: 3_000)
        #expect(RTPStreamSender.paddingStream(among: layers) === low)
    }

    /// However many bytes the pacer asks for, no padding packet carries under the minimum (Janus
    /// 1.1.2 overran its receive buffer on an RTX packet with one byte after its header) nor over
    /// 255, and the packets add up to what was asked, give or take the rounding of an even split.
    @Test func noPaddingPacketCarriesLessThanTheMinimum() throws {
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 1, payloadType: 96, clockRate: 90_000, rtx: (ssrc: 2, payloadType: 97))
        ) { _, _ in true }
        sender.send([RTPPayloadUnit(payload: [1, 2, 3], marker: true)], timestamp: 9, nowMicros: 0)
        for bytes in [1, 40, 200, 291, 292, 293, 582, 583, 1000, 1455, 1456, 3000] {
            let padding = sender.paddingPackets(bytes: bytes)
            let sizes = try padding.map { Int(try RTPPacket.parse(try $0.packet.serialize()).paddingSize) }
            #expect(
                !padding.isEmpty && sizes.allSatisfy { $0 >= RTPStreamSender.minimumPadding && $0 <= 255 },
                "\(bytes) bytes: padding \(sizes)")
            let total = padding.reduce(0) { $0 + $1.size }
            let smallest = padding[0].size - sizes[0] + RTPStreamSender.minimumPadding
            #expect(total >= bytes && total < max(bytes, smallest) + padding.count, "\(bytes) bytes: \(total) sent")
        }
    }
}
