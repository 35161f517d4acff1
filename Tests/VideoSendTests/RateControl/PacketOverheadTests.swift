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

    @Test func theFirstSecondIsTakenWholeAndALaterOneMovesItAThirdOfTheWay() {
        var overhead = PacketOverhead()
        overhead.update(packets: 0, headerBytes: 0, nowMicros: 0)
        overhead.update(packets: 100, headerBytes: 2_000, nowMicros: 1_000_000)
        // 100 × 44 + 2,000 bytes = 51.2 kbit in the second, taken whole the first time.
        #expect(abs(overhead.bitsPerSecond - 51_200) < 0.01)
        // A second with nothing sent: a third of the way down.
        overhead.update(packets: 100, headerBytes: 2_000, nowMicros: 2_000_000)
        #expect(abs(overhead.bitsPerSecond - 0.7 * 51_200) < 0.01)
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

    /// Opus at 64 kbit/s in 20 ms packets (160 bytes of payload, 12 of RTP header and 8 of
    /// extensions): 50 packets a second, 72 kbit/s of RTP and 89.6 on the wire. The first measure is
    /// taken whole; a change after it is smoothed; a counter that went back changes nothing.
    @Test func theAudiosRateOnTheWireIsMeasured() {
        var audio = WireRate()
        audio.update(packets: 0, bytes: 0, nowMicros: 0)
        #expect(audio.bitsPerSecond == nil)
        audio.update(packets: 50, bytes: 50 * 180, nowMicros: 1_000_000)
        #expect(audio.bitsPerSecond == Double(50 * (180 + 44) * 8))
        // Muted: a tenth of the packets (Opus's DTX), smoothed toward it.
        audio.update(packets: 55, bytes: 55 * 180, nowMicros: 2_000_000)
        let muted = audio.bitsPerSecond ?? 0
        #expect(muted < 89_600 && muted > 60_000, "\(muted)")
        audio.update(packets: 10, bytes: 100, nowMicros: 3_000_000)
        #expect(audio.bitsPerSecond == muted)
    }
}
