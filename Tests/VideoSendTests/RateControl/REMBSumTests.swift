import Testing
@testable import VideoSend

/// REMB messages per set of streams, added up for the connection (a manual clock in microseconds).
@Suite struct REMBSumTests {
    @Test func oneREMBForEveryStreamIsTakenAsItIs() {
        var sum = REMBSum()
        #expect(sum.received(bitrate: 1_500_000, ssrcs: [1, 2], nowMicros: 0) == 1_500_000)
        #expect(sum.received(bitrate: 1_200_000, ssrcs: [1, 2], nowMicros: 1_000_000) == 1_200_000)
        #expect(sum.sets == 1)
    }

    @Test func oneREMBPerStreamAddsUp() {
        // aiortc: the screen's receiver and the camera's each say what they take.
        var sum = REMBSum()
        #expect(sum.received(bitrate: 1_400_000, ssrcs: [1], nowMicros: 0) == 1_400_000)
        #expect(sum.received(bitrate: 73_000, ssrcs: [2], nowMicros: 200_000) == 1_473_000)
        #expect(sum.received(bitrate: 1_600_000, ssrcs: [1], nowMicros: 1_000_000) == 1_673_000)
        #expect(sum.sets == 2)
    }

    @Test func aSetThatOverlapsReplacesTheOlderOne() {
        var sum = REMBSum()
        _ = sum.received(bitrate: 400_000, ssrcs: [1], nowMicros: 0)
        _ = sum.received(bitrate: 100_000, ssrcs: [2], nowMicros: 0)
        #expect(sum.received(bitrate: 900_000, ssrcs: [2, 3], nowMicros: 500_000) == 1_300_000)
        #expect(sum.received(bitrate: 800_000, ssrcs: [], nowMicros: 600_000) == 800_000, "no list: every stream")
        #expect(sum.sets == 1)
    }

    @Test func aStreamNotHeardFromIsDroppedAfterItsLifetime() {
        var sum = REMBSum(lifetimeMicros: 5_000_000)
        _ = sum.received(bitrate: 300_000, ssrcs: [2], nowMicros: 0)
        #expect(sum.received(bitrate: 1_000_000, ssrcs: [1], nowMicros: 5_000_000) == 1_300_000)
        #expect(sum.received(bitrate: 1_000_000, ssrcs: [1], nowMicros: 5_000_001) == 1_000_000)
    }
}
