import ScreenWatchdog
import Testing

/// Timelines, one character a second, for one connection "c1" and the capture:
///   `-` frames in, encoded and sent    `f` frames in, none encoded or sent
///   `e` frames in and encoded, none sent    `l` frames in and encoded, none sent, the link holds them back
///   `_` the capture delivers nothing (so nothing comes in)
///   `L` frames in, none encoded or sent, the link's estimate at its floor (said to hold it back)
/// The expected line has a character a second: `-` no step, `c` restart capture, `k` keyframe,
/// `e` fresh encoder, `t` new transceiver, `s` back to full size, `r` recovered; several steps in
/// one second are written in brackets, e.g. `(rs)`.
@Suite struct SenderLadderTests {
    struct Run {
        var marbles = ""
        var steps: [LadderStep] = []
        var ladder = SenderLadder()
    }

    /// `ageAtStart`: the connection's age at the first tick (the grace is its first 10 s).
    func run(_ timeline: String, ageAtStart: Duration = .seconds(20)) -> Run {
        var result = Run()
        let start = ContinuousClock.now
        var capture = 0, framesIn = 0, encoded = 0, sent = 0
        for (second, event) in timeline.enumerated() {
            if event != "_" { capture += 30; framesIn += 30 }
            if event == "-" || event == "e" || event == "l" { encoded += 30 }
            if event == "-" { sent += 30 }
            let counters = SenderCounters(
                captureFrames: capture,
                connections: [
                    "c1": ConnectionCounters(
                        framesIn: framesIn, framesEncoded: encoded, framesSent: sent,
                        linkLimited: event == "l" || event == "L", age: ageAtStart + .seconds(second))
                ])
            let steps = result.ladder.tick(now: start + .seconds(second), counters: counters)
            result.steps += steps
            let marks = steps.map { step -> String in
                switch step.action {
                case .restartCapture: "c"
                case .requestKeyframe: "k"
                case .freshEncoder: "e"
                case .newTransceiver: "t"
                case .restoreScale: "s"
                case .recovered: "r"
                default: "?"
                }
            }
            result.marbles += marks.isEmpty ? "-" : marks.count == 1 ? marks[0] : "(\(marks.joined()))"
        }
        return result
    }

    @Test func aConnectionThatEncodesNothingClimbsKeyframeFreshEncoderNewTransceiverThreeSecondsApart() {
        let run = run("ffffffffffffffffff")
        #expect(
            run.marbles == "------k--e--t----k",
            "stuck from 1 s: keyframe at 5 s stuck, then every 3 s; again 5 s after the top")
        #expect(run.steps.map(\.action).contains(.freshEncoder("c1", scale: 2.0 / 3)))
        #expect(run.steps.first?.reason == "c1 took 180 frames in and encoded none for 5 s")
    }

    @Test func encodingButSendingNothingClimbsToo() {
        let run = run("eeeeeeeeee")
        #expect(run.marbles == "------k--e")
        #expect(run.steps.first?.reason == "c1 took 180 frames in and sent none for 5 s")
    }

    @Test func framesEncodedAndSentAgainEndTheClimb() {
        #expect(run("ffffffff---").marbles == "------k-r--")
        #expect(run("ffff-ffff").marbles == "---------", "4 s stuck is not a stall; the count starts again")
        #expect(run("ffffffffffff").ladder.rung == .freshEncoder)
    }

    /// An encoder that encodes nothing sends nothing, and the estimate falls to its floor: that
    /// floor does not excuse the stall.
    @Test func anEncoderThatEncodesNothingAtTheLinksFloorStillClimbs() {
        #expect(run("LLLLLLLLLLLL").marbles == "------k--e--")
        #expect(run("ffffLLLLLLLL").marbles == "------k--e--")
    }

    @Test func nothingInTheConnectionsFirstTenSeconds() {
        #expect(run("ffffffffffffffff", ageAtStart: .zero).marbles == "---------------k", "stuck counted from 10 s")
    }

    @Test func aLinkThatHoldsFramesBackIsNotAStall() {
        #expect(run("llllllllllll").marbles == "------------")
        #expect(run("ffffllffffffff").marbles == "-----------k--", "the link's seconds start the count again")
        #expect(run("ffffffflf").marbles == "------kr-", "held back by the link mid-climb: the climb ends")
    }

    @Test func theScaledDownPeriodEndsAfterThirtySeconds() {
        let stuck = String(repeating: "f", count: 10)
        let healthy = String(repeating: "-", count: 30)
        var result = run(stuck + healthy)
        #expect(result.marbles == "------k--er" + String(repeating: "-", count: 28) + "s")
        #expect(result.steps.last?.action == .restoreScale("c1"))
        #expect(result.ladder.scaledDown.isEmpty)
        result = run(stuck + String(repeating: "-", count: 20))
        #expect(result.ladder.scaledDown == ["c1"], "still a third smaller 20 s after the fresh encoder")
    }

    @Test func aCaptureSilentThreeSecondsIsRestartedAndAgainEveryThreeSeconds() {
        #expect(run("--____-___").marbles == "----c----c")
        #expect(run("-_______").marbles == "---c--c-", "silent since its last frame at 0 s")
        #expect(run("-__-__-__").marbles == "---------", "2 s silences are not a stall")
        #expect(run("--___").steps.first?.reason == "the capture reported no frame for 3 s (still at 60)")
    }

    @Test func aClimbNeedsFramesComingIn() {
        // The capture stops after the keyframe: the connection gets no frames, so it does not
        // climb; the capture is restarted instead.
        #expect(run("fffffff___").marbles == "------k--c")
    }

    @Test func countersThatStartAgainStartTheWatchAgain() {
        var ladder = SenderLadder()
        let start = ContinuousClock.now
        func tick(_ second: Int, _ framesIn: Int, _ encoded: Int) -> [LadderStep] {
            ladder.tick(
                now: start + .seconds(second),
                counters: SenderCounters(
                    captureFrames: second,
                    connections: [
                        "c1": ConnectionCounters(
                            framesIn: framesIn, framesEncoded: encoded, framesSent: encoded, age: .seconds(60))
                    ]))
        }
        for second in 0...6 { _ = tick(second, 100 + second * 30, 50) }
        #expect(ladder.rung(of: "c1") == .keyframe)
        #expect(tick(7, 10, 0).isEmpty, "a new transceiver's counters from zero: watched afresh")
        #expect(ladder.rung(of: "c1") == .none)
    }

    @Test func aConnectionThatGoesAwayIsForgotten() {
        var ladder = SenderLadder()
        let start = ContinuousClock.now
        for second in 0...6 {
            _ = ladder.tick(
                now: start + .seconds(second),
                counters: SenderCounters(
                    captureFrames: second,
                    connections: [
                        "c1": ConnectionCounters(
                            framesIn: second * 30, framesEncoded: 0, framesSent: 0, age: .seconds(60))
                    ]))
        }
        #expect(ladder.rung == .keyframe)
        #expect(ladder.tick(now: start + .seconds(7), counters: SenderCounters(captureFrames: 7)).isEmpty)
        #expect(ladder.rung == .none)
    }
}
