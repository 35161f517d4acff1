import Testing
@testable import CallsClient
@testable import CallMedia

@Suite struct KeyframeResponseTests {
    @Test func requestsAreTimedToTheKeyframeThatAnswersThem() {
        let response = KeyframeResponse()
        response.keyframeSent(nowMicros: 1_000)  // no request pending: not counted
        #expect(response.figures.answered == 0)
        response.requested(nowMicros: 10_000)
        response.requested(nowMicros: 50_000)  // answered by the same keyframe, timed from the first
        response.keyframeSent(nowMicros: 130_000)
        #expect(response.figures == .init(answered: 1, lastMs: 120, maxMs: 120))
        response.requested(nowMicros: 200_000)
        response.keyframeSent(nowMicros: 240_000)
        #expect(response.figures == .init(answered: 2, lastMs: 40, maxMs: 120))
    }
}
