@testable import CallsClient
import RTPWire
import Testing
import VideoSend
@testable import CallMedia

@Suite struct TransportFeedbackRecorderTests {
    @Test func reportsEveryNumberOnceAsArrivedOrMissing() {
        var recorder = TransportFeedbackRecorder()
        for (sequence, micros): (UInt16, Int64) in [(65534, 1_000), (65535, 2_000), (1, 4_000)] {
            recorder.received(sequence: sequence, arrivalMicros: micros)
        }
        let first = recorder.feedback(senderSSRC: 1, mediaSSRC: 2)
        #expect(first.count == 1)
        #expect(first.first?.baseSequenceNumber == 65534)
        #expect(first.first?.statuses.map { $0 == .notReceived } == [false, false, true, false])

        // 0 arrives late: already reported missing, not again. 2 was lost; 3 arrives.
        recorder.received(sequence: 0, arrivalMicros: 5_000)
        recorder.received(sequence: 3, arrivalMicros: 6_000)
        let second = recorder.feedback(senderSSRC: 1, mediaSSRC: 2)
        #expect(second.first?.baseSequenceNumber == 2)
        #expect(second.first?.statuses.map { $0 == .notReceived } == [true, false])
        #expect(second.first?.feedbackPacketCount == 1)
        #expect(recorder.feedback(senderSSRC: 1, mediaSSRC: 2).isEmpty)
    }

    @Test func theSendersAdapterReadsBackTheArrivalGaps() throws {
        var adapter = TransportFeedbackAdapter()
        var recorder = TransportFeedbackRecorder()
        for i in 0..<50 {
            adapter.packetSent(sequence: UInt16(i), size: 1000, nowMicros: Int64(i) * 1_000)
            if i % 10 != 7 { recorder.received(sequence: UInt16(i), arrivalMicros: 900_000_000 + Int64(i) * 1_500) }
        }
        let bytes = try RTCPCompound.serialize(
            recorder.feedback(senderSSRC: 1, mediaSSRC: 2).map { .transportWideFeedback($0) })
        var results: [PacketFeedback] = []
        for case .transportWideFeedback(let message) in try RTCPCompound.parse(bytes) {
            results += adapter.feedback(message)
        }
        #expect(results.count == 50)
        #expect(results.filter { $0.arrivalMicros == nil }.map(\.sequence) == [7, 17, 27, 37, 47])
        let received = results.filter { $0.arrivalMicros != nil }
        for (a, b) in zip(received, received.dropFirst()) {
            #expect(b.arrivalMicros! - a.arrivalMicros! == (b.sequence - a.sequence) * 1_500)
        }
    }
}
