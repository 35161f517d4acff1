import Testing
@testable import VideoSend

@Suite struct DelayBasedDetectorTests {
    /// Packets every 10 ms (one group each) whose one-way delay grows by `growthMicros` a packet.
    private func packets(count: Int, growthMicros: Int64, from start: Int64 = 0, baseDelay: Int64 = 20_000)
        -> [PacketFeedback]
    {
        (0..<count).map { i in
            let send = start + Int64(i) * 10_000
            return PacketFeedback(
                sequence: Int64(i), sendMicros: send, size: 1200,
                arrivalMicros: send + baseDelay + Int64(i) * growthMicros)
        }
    }

    @Test func steadyDelayIsNormal() {
        var detector = DelayBasedDetector()
        let usage = detector.update(packets(count: 200, growthMicros: 0))
        #expect(usage == .normal)
        #expect(abs(detector.trend) < 0.001)
    }

    @Test func growingDelayIsOveruseAndShrinkingDelayUnderuse() {
        var growing = DelayBasedDetector()
        let up = growing.update(packets(count: 100, growthMicros: 1_000))
        #expect(up == .overusing)
        var shrinking = DelayBasedDetector()
        let down = shrinking.update(packets(count: 100, growthMicros: -1_000, baseDelay: 200_000))
        #expect(down == .underusing)
    }

    /// A receiver that stalls for 150 ms every 700 ms (a busy machine) then reads everything at
    /// once sees a clump; a clump is one group, and the swing of delay is not read as a queue.
    @Test func packetsArrivingInClumpsAreNotOveruse() {
        var detector = DelayBasedDetector()
        var states: Set<BandwidthUsage> = []
        let clumped = (0..<1200).map { i -> PacketFeedback in
            let send = Int64(i) * 4_000
            let onTime = send + 20_000
            let phase = onTime % 700_000
            let arrival = phase < 150_000 ? onTime - phase + 150_000 : onTime
            return PacketFeedback(sequence: Int64(i), sendMicros: send, size: 1200, arrivalMicros: arrival)
        }
        for chunk in stride(from: 0, to: clumped.count, by: 20) {
            states.insert(detector.update(Array(clumped[chunk..<chunk + 20])))
        }
        #expect(!states.contains(.overusing), "\(states)")
    }

    @Test func theThresholdAdaptsTowardsTheTrendAndStaysInItsRange() {
        var detector = DelayBasedDetector()
        detector.update(packets(count: 400, growthMicros: 0))
        #expect(detector.thresholdMs == 6, "falls to its floor on a flat trend, got \(detector.thresholdMs)")
    }

    @Test func slopeOfALine() {
        #expect(DelayBasedDetector.slope([(0, 1), (1, 3), (2, 5)]) == 2)
        #expect(DelayBasedDetector.slope([(1, 1), (1, 2)]) == nil)
    }
}
