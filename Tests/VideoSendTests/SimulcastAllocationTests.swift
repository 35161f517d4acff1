import Testing
@testable import VideoSend

/// The split of a simulcast screen's target over its layers, as marbles: each step is a budget at
/// a time, and what each layer (h, m, l) gets, or off.
@Suite struct SimulcastAllocationTests {
    func screen() -> SimulcastAllocation { .screen(rids: ["h", "m", "l"], maxBitrate: 4_000_000) }

    @Test func theLayersFollowLibwebrtcsRatesForTheirSizes() {
        let layers = screen().layers
        #expect(layers.map(\.divisor) == [1, 2, 4])
        #expect(layers.map(\.minBitrate) == [300_000, 150_000, 30_000])
        #expect(layers.map(\.maxBitrate) == [4_000_000, 500_000, 150_000])
    }

    /// The start rate carries the two lower layers: each its minimum, then the rest from the
    /// lowest up.
    @Test func theLowestLayersComeFirst() {
        var split = screen()
        #expect(split.allocate(260_000, nowMicros: 0) == [nil, 150_000, 110_000])
        #expect(split.active == [false, true, true])
        // Plenty: the lower layers to their maxima, the rest to the full size.
        var rich = screen()
        #expect(rich.allocate(3_000_000, nowMicros: 0) == [2_350_000, 500_000, 150_000])
    }

    /// The lowest layer is never switched off, however little there is.
    @Test func theLowestLayerStaysOn() {
        var split = screen()
        #expect(split.allocate(10_000, nowMicros: 0) == [nil, nil, 10_000])
        #expect(split.allocate(0, nowMicros: 1_000_000) == [nil, nil, 0])
    }

    /// A layer that went off comes back only after its minimum has been covered with 20 % to
    /// spare for 5 s; a dip in between starts the wait again. The layer above waits its own turn.
    @Test func aLayerComesBackAfterTheHold() {
        var split = screen()
        #expect(split.allocate(3_000_000, nowMicros: 0) == [2_350_000, 500_000, 150_000])
        #expect(split.allocate(400_000, nowMicros: 1_000_000) == [nil, 250_000, 150_000])  // h off
        let marbles: [(Int64, Int, [Bool])] = [
            (2_000_000, 2_000_000, [false, true, true]),  // covered: the wait starts
            (5_000_000, 2_000_000, [false, true, true]),
            (6_000_000, 500_000, [false, true, true]),  // 500 − 180 < 360: the wait starts again
            (7_000_000, 2_000_000, [false, true, true]),
            (11_000_000, 2_000_000, [false, true, true]),
            (12_000_000, 2_000_000, [true, true, true])  // 5 s since 7 s
        ]
        for (now, budget, active) in marbles {
            _ = split.allocate(budget, nowMicros: now)
            #expect(split.active == active, "at \(now / 1_000_000) s")
        }
    }

    /// Switching the middle layer off takes the top one with it.
    @Test func aLayerGoesOffWithTheOnesAbove() {
        var split = screen()
        _ = split.allocate(3_000_000, nowMicros: 0)
        #expect(split.allocate(100_000, nowMicros: 1_000_000) == [nil, nil, 100_000])
        #expect(split.active == [false, false, true])
    }

    /// Two layers: the lower has the quarter size's rates, the upper the rest.
    @Test func twoLayersSplitTheSameWay() {
        var split = SimulcastAllocation.screen(rids: ["f", "q"], maxBitrate: 1_000_000)
        #expect(split.layers.map(\.minBitrate) == [300_000, 30_000])
        #expect(split.allocate(1_000_000, nowMicros: 0) == [850_000, 150_000])
    }
}
