import RTPWire
import ShareCore
import Testing
@testable import VideoSend

/// The pacer's budget on a manual clock (microseconds).
@Suite struct PacerTests {
    @Test func aKeyframeIsSpreadAtTwoAndAHalfTimesTheTarget() {
        // 1 Mbit/s target → 2.5 Mbit/s pacing = 312.5 bytes per ms. A 100 kB keyframe in 1 kB packets.
        var pacer = Pacer<Int>(targetBitrate: 1_000_000)
        for i in 0..<100 { pacer.enqueue(i, size: 1000, priority: .video, nowMicros: 0) }
        var releasedAt: [Int64] = []
        var now: Int64 = 0
        while pacer.queuedPackets > 0 && now < 10_000_000 {
            for _ in pacer.release(nowMicros: now) { releasedAt.append(now) }
            now += 1000
        }
        #expect(releasedAt.count == 100)
        // The first burst is at most the 5 ms budget (1563 bytes → 2 packets).
        #expect(releasedAt.filter { $0 == 0 }.count <= 2)
        // 100 kB at 312.5 B/ms takes about 320 ms; allow the burst and rounding.
        let span = releasedAt.last! - releasedAt.first!
        #expect(span >= 300_000 && span <= 330_000, "spread over \(span) µs")
        // No 10 ms window carries more than the pacing rate's worth and one packet.
        for start in stride(from: Int64(0), to: span, by: 10_000) {
            let inWindow = releasedAt.filter { $0 >= start && $0 < start + 10_000 }.count
            #expect(inWindow <= 5, "\(inWindow) packets in 10 ms from \(start)")
        }
    }

    @Test func audioThenRetransmissionsThenVideo() {
        var pacer = Pacer<String>(targetBitrate: 100_000)
        pacer.enqueue("v1", size: 1000, priority: .video, nowMicros: 0)
        pacer.enqueue("v2", size: 1000, priority: .video, nowMicros: 0)
        pacer.enqueue("r1", size: 1000, priority: .retransmission, nowMicros: 0)
        pacer.enqueue("a1", size: 100, priority: .audio, nowMicros: 0)
        var order: [String] = []
        var now: Int64 = 0
        while pacer.queuedPackets > 0 && now < 1_000_000 {
            order += pacer.release(nowMicros: now)
            now += 1000
        }
        #expect(order == ["a1", "r1", "v1", "v2"])
    }

    @Test func audioLeavesEvenWhenTheBudgetIsSpent() {
        var pacer = Pacer<String>(targetBitrate: 100_000)
        for i in 0..<10 { pacer.enqueue("v\(i)", size: 1200, priority: .video, nowMicros: 0) }
        _ = pacer.release(nowMicros: 0)
        _ = pacer.release(nowMicros: 1000)
        pacer.enqueue("a", size: 100, priority: .audio, nowMicros: 1000)
        let released = pacer.release(nowMicros: 1000)
        #expect(released == ["a"])
    }

    @Test func aLongQueueRaisesThePacingRateSoItDrainsWithinHalfASecond() {
        var pacer = Pacer<Int>(targetBitrate: 100_000)
        // 500 kB queued at a 250 kbit/s pacing rate would take 16 s.
        for i in 0..<500 { pacer.enqueue(i, size: 1000, priority: .video, nowMicros: 0) }
        #expect(pacer.pacingBitrate(nowMicros: 0) >= 8_000_000)
        var now: Int64 = 0
        var longestWait: Int64 = 0
        while pacer.queuedPackets > 0 && now < 10_000_000 {
            longestWait = max(longestWait, pacer.queueDelayMicros(nowMicros: now))
            _ = pacer.release(nowMicros: now)
            now += 1000
        }
        #expect(pacer.queuedPackets == 0)
        #expect(longestWait <= 510_000, "a packet waited \(longestWait) µs")
    }

    @Test func aFullQueueRefusesVideoButNotAudio() {
        var configuration = Pacer<Int>.Configuration()
        configuration.maximumPackets = 3
        var pacer = Pacer<Int>(targetBitrate: 100_000, configuration: configuration)
        var accepted: [Bool] = []
        for i in 0..<3 { accepted.append(pacer.enqueue(i, size: 100, priority: .video, nowMicros: 0)) }
        accepted.append(pacer.enqueue(3, size: 100, priority: .video, nowMicros: 0))
        accepted.append(pacer.enqueue(4, size: 100, priority: .retransmission, nowMicros: 0))
        accepted.append(pacer.enqueue(5, size: 100, priority: .audio, nowMicros: 0))
        #expect(accepted == [true, true, true, false, false, true])
        #expect(pacer.counters.refused == 2)
        #expect(pacer.queueDelayMicros(nowMicros: 40_000) == 40_000)
    }

    @Test func anIdlePacerSavesNoMoreThanOneBurst() {
        var pacer = Pacer<Int>(targetBitrate: 1_000_000)
        _ = pacer.release(nowMicros: 0)
        for i in 0..<50 { pacer.enqueue(i, size: 1000, priority: .video, nowMicros: 10_000_000) }
        // Ten idle seconds earn at most 5 ms at 2.5 Mbit/s: 1563 bytes, so two packets.
        let released = pacer.release(nowMicros: 10_000_000)
        #expect(released.count == 2)
    }
}

/// The transport stamp is the stage after the pacer: the transport-wide number and abs-send-time
/// are those of the moment a packet leaves, in the order packets leave, whatever order the
/// streams made them in.
@Suite struct TransportStampTests {
    @Test func stampsTheTransportNumberAndSendTimeWhenThePacketLeaves() throws {
        let sent = LockedList<(UInt16?, Int, Int64)>()
        let wire = LockedList<[UInt8]>()
        let writer = TransportStamp.writer(sequence: TransportSequenceCounter(), sent: { sent.append(($0, $1, $3)) }) {
            wire.append($0)
            return true
        }
        let extensions = SendExtensions(mid: (1, "v"), absSendTimeID: 2, transportSequenceID: 3)
        var pacer = Pacer<OutgoingPacket>(targetBitrate: 100_000)
        for sequence: UInt16 in [100, 101] {
            let packet = RTPPacket(
                marker: false, payloadType: 96, sequenceNumber: sequence, timestamp: 0, ssrc: 9,
                payload: Array(repeating: 0, count: 1000))
            pacer.enqueue(
                OutgoingPacket(packet: packet, priority: .video, extensions: extensions), size: 1036,
                priority: .video, nowMicros: 0)
        }
        // A retransmission queued later leaves first.
        let rtx = RTPPacket(marker: false, payloadType: 97, sequenceNumber: 7, timestamp: 0, ssrc: 10, payload: [1, 2])
        pacer.enqueue(
            OutgoingPacket(packet: rtx, priority: .retransmission, extensions: extensions), size: 38,
            priority: .retransmission, nowMicros: 1_000)
        var now: Int64 = 1_000
        while pacer.queuedPackets > 0, now < 1_000_000 {
            for packet in pacer.release(nowMicros: now) { _ = writer(packet, now) }
            now += 1_000
        }
        let map = HeaderExtensionMap([
            1: HeaderExtensionURI.mid, 2: HeaderExtensionURI.absSendTime,
            3: HeaderExtensionURI.transportWideSequenceNumber
        ])
        let packets = try wire.items.map { try RTPPacket.parse($0) }
        #expect(packets.map(\.sequenceNumber) == [7, 100, 101])
        #expect(
            try packets.map { try $0.headerExtensionValue(TransportSequenceNumber.self, map: map)?.value } == [0, 1, 2])
        #expect(
            try packets.map { try $0.headerExtensionValue(MediaIdentification.self, map: map)?.value } == [
                "v", "v", "v"
            ])
        let times = sent.items.map(\.2)
        #expect(times.count == 3 && times[0] == 1_000 && times[2] > times[1], "released at \(times)")
        #expect(sent.items.map(\.1) == wire.items.map(\.count))
        // abs-send-time is 6.18 fixed point seconds: the last packet's matches its release time.
        let stamped = try packets[2].headerExtensionValue(AbsSendTime.self, map: map)
        #expect(stamped == AbsSendTime(seconds: Double(times[2]) / 1_000_000))
    }
}

final class LockedList<T: Sendable>: Sendable {
    private let storage = Locked<[T]>([])
    func append(_ item: T) { storage.withLock { $0.append(item) } }
    var items: [T] { storage.withLock { $0 } }
}
