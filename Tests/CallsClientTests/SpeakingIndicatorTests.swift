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

    @Test func speechLightsOnceItHasKeptUpAHundredAndFiftyMilliseconds() {
        #expect(run(Array(repeating: -20, count: 5)) == "..SSS", "0.1 s is not yet 0.15 s; 0.2 s is")
    }

    @Test func aClickOrAQuietRoomNeverLights() {
        #expect(run([-20, -120, -120, -20, -120, -120]) == "......", "100 ms bursts")
        #expect(run(Array(repeating: -50, count: 20)) == String(repeating: ".", count: 20), "under −42 dBFS")
    }

    @Test func theReleaseHoldsThroughAPauseBetweenWords() {
        let words = Array(repeating: -20.0, count: 10) + Array(repeating: -120.0, count: 3) + Array(repeating: -20.0, count: 5)
        #expect(run(words) == "..SSSSSSSSSSSSSSSS", "a 300 ms gap keeps the light on")
    }

    @Test func silenceDarkensWithinASecond() {
        let lights = run(Array(repeating: -20, count: 10) + Array(repeating: -120, count: 12))
        let after = lights.dropFirst(10)
        #expect(after.prefix(5) == "SSSSS", "the release is 300 ms: still lit half a second on")
        #expect(after.suffix(3) == "...", "dark within a second: \(lights)")
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
