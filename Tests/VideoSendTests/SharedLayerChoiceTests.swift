import Testing
@testable import VideoSend

/// Which shared layer one mesh connection is sent, as marbles: each step is the connection's
/// estimate at a time, and the layer wanted (0 full, 1 half, 2 a quarter).
@Suite struct SharedLayerChoiceTests {
    func choice() -> SharedLayerChoice {
        SharedLayerChoice(allocation: .screen(rids: ["h", "m", "l"], maxBitrate: 2_000_000))
    }

    func run(_ choice: inout SharedLayerChoice, _ marbles: [(seconds: Double, kbps: Int, layer: Int)]) {
        for step in marbles {
            let layer = choice.choose(targetBitrate: step.kbps * 1000, nowMicros: Int64(step.seconds * 1_000_000))
            #expect(layer == step.layer, "at \(step.seconds) s, \(step.kbps) kbit/s")
        }
    }

    /// Each layer is carried from the rate the layer below tops out at.
    @Test func theFloorsAreTheMaximaOfTheLayersBelow() {
        #expect(choice().floors == [500_000, 150_000, 0])
        #expect(SharedLayerChoice(floors: []).floors == [0])
    }

    /// The first estimate picks at once, and so does the start-up: the probes lift the estimate in
    /// the first second, and the connection follows without the hold.
    @Test func theStartUpMovesUpAtOnce() {
        var layers = choice()
        run(&layers, [(0, 300, 1), (0.5, 300, 1), (1.0, 1_800, 0), (4, 1_800, 0)])
    }

    /// Down at once; up again only after 20 % over the floor has held for 5 s, and a dip restarts
    /// the wait.
    @Test func downAtOnceUpAfterTheHold() {
        var layers = choice()
        run(
            &layers,
            [
                (0, 2_000, 0),
                (10, 400, 1),  // under 500: the half size
                (11, 100, 2),  // under 150: the quarter
                (12, 170, 2),  // over 150, but under 180 (the margin)
                (13, 200, 2),  // the wait for the half size starts
                (17, 200, 2),
                (18, 200, 1),  // 5 s
                (19, 700, 1),  // over 600: the wait for the full size starts
                (21, 550, 1),  // a dip under the margin: it starts again
                (22, 700, 1),
                (26, 700, 1),
                (27, 700, 0)
            ])
    }

    /// An estimate far above every floor after a fall goes straight to the best layer it
    /// carries, after one hold.
    @Test func upSkipsALayerWhenTheEstimateCarriesIt() {
        var layers = choice()
        run(&layers, [(0, 1_000, 0), (10, 50, 2), (11, 3_000, 2), (16, 3_000, 0)])
    }

    /// A receiver whose keyframe did not get through gets the layer below for 5 s, whatever its
    /// estimate; then the usual rule (and hold) applies.
    @Test func aKeyframeThatDidNotGetThroughHoldsTheLayerBelow() {
        var layers = choice()
        run(&layers, [(0, 2_000, 0), (10, 2_000, 0)])
        #expect(layers.holdSmaller(nowMicros: 11_000_000) == 1)
        run(&layers, [(12, 2_000, 1), (15.9, 2_000, 1), (16, 2_000, 1), (20.9, 2_000, 1), (21, 2_000, 0)])
        // The smallest layer has none below: it stays.
        var small = choice()
        run(&small, [(0, 100, 2)])
        #expect(small.holdSmaller(nowMicros: 1_000_000) == 2)
    }

    /// One layer: always that one.
    @Test func oneLayerIsAlwaysChosen() {
        var one = SharedLayerChoice(floors: [0])
        run(&one, [(0, 10, 0), (1, 5_000, 0)])
        #expect(one.holdSmaller(nowMicros: 2_000_000) == 0)
    }
}
