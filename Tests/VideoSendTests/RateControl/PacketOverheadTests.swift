import Testing
import VideoSend

/// The video packets' headers on the wire come off the encoders' targets, smoothed like the repair.
@Suite struct PacketOverheadTests {
    @Test func steadyPacketsCostTheirHeadersOnTheWire() {
        var overhead = PacketOverhead()
        // 150 packets a second with 32 bytes of RTP header and extensions each: with UDP, IPv4 and
        // SRTP's tag, 76 bytes a packet, 91.2 kbit/s (about 6 % of 1.5 Mbit/s in 1,200-byte packets).
        for second in 0...24 {
            overhead.update(packets: second * 150, headerBytes: second * 150 * 32, nowMicros: Int64(second) * 1_000_000)
        }
        #expect(abs(overhead.bitsPerSecond - 91_200) < 200, "\(overhead.bitsPerSecond)")
    }

    @Test func oneSecondsBurstMovesItAThirdOfTheWay() {
        var overhead = PacketOverhead()
        overhead.update(packets: 0, headerBytes: 0, nowMicros: 0)
        overhead.update(packets: 100, headerBytes: 2_000, nowMicros: 1_000_000)
        // 100 × 44 + 2,000 bytes = 51.2 kbit in the second; a third of it at once.
        #expect(abs(overhead.bitsPerSecond - 0.3 * 51_200) < 0.01)
    }

    @Test func nothingBeforeTwoCountsAndNothingFromACounterThatWentBack() {
        var overhead = PacketOverhead()
        overhead.update(packets: 500, headerBytes: 10_000, nowMicros: 0)
        #expect(overhead.bitsPerSecond == 0)
        overhead.update(packets: 10, headerBytes: 100, nowMicros: 1_000_000)
        #expect(overhead.bitsPerSecond == 0)
    }

    @Test func itComesOffTheTargetWithTheAudio() {
        var overhead = PacketOverhead()
        for second in 0...24 {
            overhead.update(packets: second * 150, headerBytes: second * 150 * 32, nowMicros: Int64(second) * 1_000_000)
        }
        let repair = RepairCost()
        let video = repair.videoBitrate(target: 1_500_000, reserve: 40_000 + Int(overhead.bitsPerSecond))
        #expect(video > 1_368_000 && video < 1_369_000, "\(video)")
    }
}
