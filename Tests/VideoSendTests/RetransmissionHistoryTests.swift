import RTPWire
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
