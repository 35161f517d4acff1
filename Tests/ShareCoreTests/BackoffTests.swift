import ShareCore
import Testing

@Suite struct BackoffTests {
    @Test func republishingWaitsDoubleFromTwoSecondsToAMinute() {
        var backoff = Backoff(first: .seconds(2), cap: .seconds(60))
        let waits = (0..<8).map { _ in backoff.failed() }
        #expect(waits == [2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(backoff.failures == 8)
    }

    @Test func aSuccessStartsTheWaitsAgain() {
        var backoff = Backoff(first: .seconds(2), cap: .seconds(60))
        _ = backoff.failed()
        _ = backoff.failed()
        #expect(backoff.delay == .seconds(8))
        backoff.succeeded()
        #expect(backoff.delay == .seconds(2))
    }

    /// The room's renewal table: 2 s or 15 s first, each renewal since the last connection twice
    /// as late, never past a minute.
    @Test(arguments: [
        (2, 0, 2), (2, 1, 4), (2, 4, 32), (2, 5, 60), (2, 40, 60),
        (15, 0, 15), (15, 1, 30), (15, 2, 60), (15, 1_000_000, 60)
    ])
    func theWaitAfterSomeFailures(first: Int, failures: Int, seconds: Int) {
        let backoff = Backoff(first: .seconds(first), cap: .seconds(60))
        #expect(backoff.delay(afterFailures: failures) == .seconds(seconds))
    }

    @Test func aNegativeCountWaitsTheFirst() {
        #expect(Backoff(first: .seconds(2), cap: .seconds(60)).delay(afterFailures: -3) == .seconds(2))
    }
}

@Suite struct DurationUnitsTests {
    @Test func aDurationInEachUnit() {
        let d = Duration.milliseconds(1_500) + .nanoseconds(999)
        #expect(d.inSeconds == 1.500000999)
        #expect(d.inMilliseconds == 1_500)
        #expect(d.inMicroseconds == 1_500_000)
        #expect(d.inNanoseconds == 1_500_000_999)
        #expect(Duration.zero.inSeconds == 0)
        #expect(Duration.seconds(-2).inMilliseconds == -2_000)
    }
}
