import RTPWire
import Testing
@testable import VideoSend

@Suite struct TransportFeedbackAdapterTests {
    @Test func matchesFeedbackToSendTimesAcrossTheSequenceWrap() throws {
        var adapter = TransportFeedbackAdapter()
        let numbers: [UInt16] = [65534, 65535, 0, 1]
        for (i, n) in numbers.enumerated() {
            adapter.packetSent(sequence: n, size: 1000 + i, nowMicros: Int64(i) * 1000)
        }
        // 65535 lost; the others arrive 30 ms after they left.
        let message = try TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 2, feedbackPacketCount: 0,
            arrivals: [(65534, .microseconds(30_000)), (0, .microseconds(32_000)), (1, .microseconds(33_000))])
        let results = adapter.feedback(message)
        #expect(results.map(\.sequence) == [65534, 65535, 65536, 65537])
        #expect(results.map(\.size) == [1000, 1001, 1002, 1003])
        #expect(results.map(\.sendMicros) == [0, 1000, 2000, 3000])
        #expect(results.map(\.arrivalMicros) == [30_000, nil, 32_000, 33_000])
        // Received packets are reported once; the lost one may still arrive later.
        #expect(adapter.packetsAwaitingFeedback == 1)
    }

    @Test func feedbackForPacketsNeverSentIsSkipped() throws {
        var adapter = TransportFeedbackAdapter()
        adapter.packetSent(sequence: 10, size: 500, nowMicros: 0)
        let message = try TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 2, feedbackPacketCount: 0,
            arrivals: [(10, .microseconds(5_000)), (11, .microseconds(6_000))])
        #expect(adapter.feedback(message).map(\.sequence) == [10])
    }

    @Test func referenceTimeUnwrapsAcross24Bits() {
        var adapter = TransportFeedbackAdapter()
        adapter.packetSent(sequence: 0, size: 100, nowMicros: 0)
        adapter.packetSent(sequence: 1, size: 100, nowMicros: 1000)
        let top = Int32(0x7F_FFFF)
        let first = TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: top,
            feedbackPacketCount: 0, statuses: [.received(delta: 0)])
        let second = TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 1, referenceTime: -0x80_0000,
            feedbackPacketCount: 1, statuses: [.received(delta: 0)])
        let a = adapter.feedback(first).first?.arrivalMicros
        let b = adapter.feedback(second).first?.arrivalMicros
        #expect(
            a != nil && b != nil && b! - a! == 64_000,
            "one 64 ms tick apart, got \(String(describing: a)) \(String(describing: b))")
    }

    @Test func packetsWithoutFeedbackAreForgottenAfterTheirRetention() {
        var adapter = TransportFeedbackAdapter()
        for i in 0..<100 { adapter.packetSent(sequence: UInt16(i), size: 100, nowMicros: Int64(i) * 200_000) }
        #expect(adapter.packetsAwaitingFeedback <= 51)
    }

    @Test func acknowledgedBitrateOverTheWindow() {
        var acked = AcknowledgedBitrate()
        #expect(acked.bitsPerSecond == nil)
        // 1000 bytes every 10 ms for a second: 800 kbit/s.
        acked.add(
            (0...100).map {
                PacketFeedback(sequence: Int64($0), sendMicros: 0, size: 1000, arrivalMicros: Int64($0) * 10_000)
            })
        #expect(acked.bitsPerSecond == 800_000)
    }
}
