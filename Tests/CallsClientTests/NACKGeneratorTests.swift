import Testing
@testable import CallsClient
@testable import CallMedia

/// The receive side's NACK decisions on a manual clock (microseconds).
@Suite struct NACKGeneratorTests {
    let lan = RetransmissionTiming(rttMicros: 2_000)  // retries every 20 ms, hold 156 ms

    @Test func aHoleIsAskedForAtOnceThenEachRetryAndForgottenWhenItArrives() {
        var nacks = NACKGenerator()
        for sequence: UInt16 in [10, 11, 14] { nacks.received(sequence, nowMicros: 0) }
        let got1 = nacks.due(nowMicros: 1_000, timing: lan)
        #expect(got1 == [12, 13])
        let got2 = nacks.due(nowMicros: 10_000, timing: lan)
        #expect(got2 == [], "not again within 20 ms")
        let got3 = nacks.received(12, nowMicros: 15_000)
        #expect(got3, "the retransmission fills the hole")
        let got4 = nacks.due(nowMicros: 22_000, timing: lan)
        #expect(got4 == [13])
        #expect(nacks.recovered == 1 && nacks.missingCount == 1 && nacks.requested == 3)
        let got5 = nacks.received(12, nowMicros: 23_000)
        #expect(!got5, "a second copy is a duplicate")
        #expect(nacks.recovered == 1)
    }

    @Test func retriesFollowTheRoundTrip() {
        var nacks = NACKGenerator()
        nacks.received(1, nowMicros: 0)
        nacks.received(3, nowMicros: 0)
        let far = RetransmissionTiming(rttMicros: 80_000)
        let got6 = nacks.due(nowMicros: 0, timing: far)
        #expect(got6 == [2])
        let got7 = nacks.due(nowMicros: 79_000, timing: far)
        #expect(got7 == [], "the answer may still be on its way")
        let got8 = nacks.due(nowMicros: 80_000, timing: far)
        #expect(got8 == [2])
    }

    @Test func aPacketIsGivenUpWhenTheFrameBufferStopsWaitingOrAfterTenTries() {
        var nacks = NACKGenerator()
        nacks.received(1, nowMicros: 0)
        nacks.received(3, nowMicros: 0)
        var asked = 0
        var step: Int64 = 0
        while step <= lan.holdMicros {
            asked += nacks.due(nowMicros: step, timing: lan).count
            step += 20_000
        }
        #expect(asked == Int(lan.holdMicros / 20_000) + 1)
        #expect(nacks.missingCount == 1)
        let got9 = nacks.due(nowMicros: lan.holdMicros + 1, timing: lan)
        #expect(got9 == [])
        #expect(nacks.missingCount == 0 && nacks.givenUp == 1)

        var slow = NACKGenerator()  // a 210 ms hold with 20 ms retries would allow 11 tries
        slow.received(1, nowMicros: 0)
        slow.received(3, nowMicros: 0)
        let timing = RetransmissionTiming(rttMicros: 20_000)
        var tries = 0
        for tick in 0..<30 { tries += slow.due(nowMicros: Int64(tick) * 20_000, timing: timing).count }
        #expect(tries == NACKGenerator.maxTries && slow.givenUp == 1)
    }

    @Test func wrapAroundIsNotARestart() {
        var nacks = NACKGenerator()
        nacks.received(65_534, nowMicros: 0)
        nacks.received(1, nowMicros: 0)  // 65535 and 0 missing, across the wrap
        let got10 = nacks.due(nowMicros: 0, timing: lan)
        #expect(got10 == [65_535, 0])
        let got11 = nacks.received(0, nowMicros: 5_000)
        #expect(got11)
        #expect(nacks.missingCount == 1 && nacks.restarts == 0)
    }

    @Test func aJumpEitherWayIsARestartNotALoss() {
        var jump = NACKGenerator()
        jump.received(100, nowMicros: 0)
        jump.received(102, nowMicros: 0)
        jump.received(20_000, nowMicros: 0)  // a restarted stream, far ahead
        let got12 = jump.due(nowMicros: 0, timing: lan)
        #expect(got12.isEmpty && jump.restarts == 1)
        jump.received(20_002, nowMicros: 0)
        let got13 = jump.due(nowMicros: 0, timing: lan)
        #expect(got13 == [20_001], "the new numbering is followed")

        var back = NACKGenerator()
        back.received(30_000, nowMicros: 0)
        back.received(5, nowMicros: 0)  // far behind: numbering afresh, not a very late packet
        back.received(7, nowMicros: 0)
        let got14 = back.due(nowMicros: 0, timing: lan)
        #expect(got14 == [6] && back.restarts == 1)
    }

    @Test func aLatePacketThatWasNeverMissingIsIgnored() {
        var nacks = NACKGenerator()
        for sequence: UInt16 in [1, 2, 3, 5] { nacks.received(sequence, nowMicros: 0) }
        let got15 = nacks.received(2, nowMicros: 1_000)
        #expect(!got15, "a duplicate")
        let got16 = nacks.due(nowMicros: 1_000, timing: lan)
        #expect(got16 == [4])
        _ = nacks.due(nowMicros: lan.holdMicros + 1, timing: lan)  // 4 given up
        let got17 = nacks.received(4, nowMicros: lan.holdMicros + 2)
        #expect(!got17, "too late: no longer asked for")
        #expect(nacks.recovered == 0 && nacks.givenUp == 1)
    }

    @Test func timingFollowsTheRoundTripWithinItsBounds() {
        #expect(RetransmissionTiming(rttMicros: nil).holdMicros == 300_000, "50 ms assumed")
        #expect(RetransmissionTiming(rttMicros: nil).retryMicros == 50_000)
        #expect(RetransmissionTiming(rttMicros: 1_000).retryMicros == 20_000, "the NACK timer's tick at least")
        #expect(RetransmissionTiming(rttMicros: 1_000).holdMicros == 153_000)
        #expect(RetransmissionTiming(rttMicros: 300_000).holdMicros == 400_000, "at most 400 ms")
    }
}
