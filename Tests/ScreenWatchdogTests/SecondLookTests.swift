import Testing

@testable import ScreenWatchdog

@Suite struct SecondLookTests {
    /// Ticks every 250 ms from a node appearing at 0: `l` the second look.
    @Test func theSecondLookComesAtTheFirstTickAfterTheDriverSettled() {
        var rule = SecondLook()
        let start = ContinuousClock.now
        rule.nodeAppeared(now: start)
        let timeline = (0..<8).map { rule.tick(now: start + .milliseconds(250 * $0)) ? "l" : "-" }.joined()
        #expect(timeline == "---l----")
    }

    @Test func aSecondNodeMovesTheLookLaterAndNothingAppearedLooksNever() {
        var rule = SecondLook()
        let start = ContinuousClock.now
        let beforeAny = rule.tick(now: start + .seconds(10))
        rule.nodeAppeared(now: start)
        rule.nodeAppeared(now: start + .milliseconds(500))
        let seen = [750, 1250, 1500].map { rule.tick(now: start + .milliseconds($0)) }
        #expect(!beforeAny)
        #expect(seen == [false, true, false])
    }
}
