import Testing
import VideoSend

@Suite struct EncodingTimersTests {
    /// One character a tenth of a second after a frame was encoded at 0: `r` a repeat is due.
    @Test func aStillFrameIsRepeatedOnceASecond() {
        let rule = StillFrameRepeat()
        let timeline = (0...12).map { rule.due(lastEncodedMicros: 0, now: Int64($0) * 100_000) ? "r" : "-" }.joined()
        #expect(timeline == "----------rrr")
        #expect(!rule.due(lastEncodedMicros: nil, now: 5_000_000), "nothing encoded yet, nothing to repeat")
    }

    @Test func aReducedScaleLastsItsSecondsAndShrinksToEvenSizes() throws {
        let reduced = try #require(ReducedScale(scale: 2.0 / 3, forSeconds: 30, now: 1_000_000))
        #expect(!reduced.expired(now: 30_999_999))
        #expect(reduced.expired(now: 31_000_000))
        #expect(reduced.apply(width: 1920, height: 1080) == (1280, 720))
        #expect(reduced.apply(width: 1279, height: 721) == (852, 480))
        #expect(reduced.apply(width: 2, height: 2) == (2, 2))
    }

    @Test(arguments: [1.0, 1.5, 0, -1])
    func aScaleThatReducesNothingIsNone(scale: Double) {
        #expect(ReducedScale(scale: scale, forSeconds: 30, now: 0) == nil)
    }
}
