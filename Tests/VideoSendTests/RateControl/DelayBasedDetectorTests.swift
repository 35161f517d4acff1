import Testing
@testable import VideoSend

@Suite struct DelayBasedDetectorTests {
    /// Packets every 5 ms (one group each) whose one-way delay grows by `growthMicros` a packet.
    private func packets(count: Int, growthMicros: Int64, from start: Int64 = 0, baseDelay: Int64 = 20_000) -> [PacketFeedback] {
        (0..<count).map { i in
            let send = start + Int64(i) * 6_000
            return PacketFeedback(sequence: Int64(i), sendMicros: send, size: 1200,
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
