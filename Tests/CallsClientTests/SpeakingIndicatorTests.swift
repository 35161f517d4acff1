import CallMedia
import Testing

/// The speaking indicator at the meter's 10 Hz, on a manual clock: one reading every 100 ms.
@Suite struct SpeakingIndicatorTests {
    let start = ContinuousClock.now

    /// The indicator after each reading: `S` speaking, `.` not.
    func run(_ levels: [Double]) -> String {
        var indicator = SpeakingIndicator()
        return String(
            levels.enumerated().map { index, level in
                indicator.level(level, now: start + .milliseconds(100 * index)) ? "S" : "."
            })
    }

    @Test func theLevelMapsFromDarkAtMinusFortyTwoToFullAtMinusTwelve() {
        #expect(SpeakingIndicator.brightness(-42) == 0)
        #expect(SpeakingIndicator.brightness(-60) == 0)
        #expect(SpeakingIndicator.brightness(-27) == 0.5)
        #expect(SpeakingIndicator.brightness(-12) == 1)
        #expect(SpeakingIndicator.brightness(-3) == 1)
    }

    /// The shared cases (Tests/Ladder/audio-path-cases.json), the browser's copy held to them too.
    @Test(arguments: AudioPathRulesTests.Cases.shared?.speaking ?? [])
    func sharedCases(_ c: AudioPathRulesTests.Cases.Levels) {
        #expect(run(c.levels) == c.expect)
    }

    @Test func theMeterReadsTheLoudestOfEachFiveFrames() {
        var meter = SpeakingMeter()
        // 20 ms frames: one loud frame in every five is enough for each reading.
        for frame in 0..<25 {
            meter.frame(frame % 5 == 2 ? -20 : -120, now: start + .milliseconds(20 * frame))
        }
        #expect(meter.isSpeaking)
        #expect(meter.indicator.glow > 0.5)
    }
}
