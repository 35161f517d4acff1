import ScreenCapture
import Testing

/// The capture watch on a manual clock: one tick every 100 ms, frames given as a timeline where
/// each character is one tick: `f` a real frame arrives, `-` nothing, `x` the stream fails.
@Suite struct CaptureWatchTests {
    struct Run {
        var actions: [(tick: Int, action: CaptureWatch.Action)] = []
        var watch: CaptureWatch
        var frames = 0
        let t0: ContinuousClock.Instant

        init(_ timeline: String, configure: (inout CaptureWatch) -> Void = { _ in }) {
            self.init(timeline, configure: configure, closed: { _ in })
        }

        /// `c` in the timeline: the portal session is closed from outside (`closed` is told
        /// whether the watch keeps the capture).
        init(_ timeline: String, configure: (inout CaptureWatch) -> Void, closed: (Bool) -> Void) {
            t0 = ContinuousClock.now
            watch = CaptureWatch(now: t0)
            configure(&watch)
            for (tick, event) in timeline.enumerated() {
                let now = t0 + .milliseconds(100 * (tick + 1))
                if event == "f" { frames += 1 }
                if event == "x" { watch.streamFailed("stream error") }
                if event == "c" { closed(watch.sessionClosed("the portal session was closed")) }
                for action in watch.tick(now: now, totalFrames: frames) {
                    actions.append((tick, action))
                    if case .restart = action { watch.restarted(now: now, totalFrames: frames) }
                }
            }
        }

        func ticks(of wanted: (CaptureWatch.Action) -> Bool) -> [Int] {
            actions.filter { wanted($0.action) }.map(\.tick)
        }
        var repeats: [Int] { ticks { $0 == .repeatLastFrame } }
        var restarts: [Int] { ticks { if case .restart = $0 { true } else { false } } }
        var noFirstFrame: [Int] { ticks { $0 == .sayNoFirstFrame } }
    }

    @Test func aStillScreenWithNoFirstFrameIsSaidOnceAndNothingIsRepeated() {
        let run = Run(String(repeating: "-", count: 60))
        #expect(run.noFirstFrame == [19])  // 2 s after the start
        #expect(run.repeats.isEmpty)  // nothing to repeat yet
        #expect(run.restarts.isEmpty)  // never moved: a still screen, not a stopped capture
    }

    @Test func aStillScreenRepeatsItsLastFrameOnceASecond() {
        let run = Run("f" + String(repeating: "-", count: 50))
        #expect(run.noFirstFrame.isEmpty)
        #expect(run.repeats == [10, 20, 30, 40, 50])
        #expect(run.restarts.isEmpty)  // one frame is not movement
    }

    @Test func movingFramesAreNotRepeated() {
        let run = Run(String(repeating: "f", count: 40))
        #expect(run.repeats.isEmpty && run.restarts.isEmpty && run.noFirstFrame.isEmpty)
    }

    @Test func aMovingCaptureThatGoesSilentIsRestartedOnceAfterThreeSeconds() {
        // 2 s of movement at 10 fps, then silence for 10 s.
        let run = Run(String(repeating: "f", count: 20) + String(repeating: "-", count: 100))
        #expect(run.restarts == [49])  // 3 s after the last frame (tick 19)
        // Repeats carry on while silent (before and after the restart).
        #expect(run.repeats.first == 29)
        let afterRestart = run.repeats.filter { $0 > 49 }
        #expect(afterRestart.count >= 5)
        #expect(zip(afterRestart, afterRestart.dropFirst()).allSatisfy { $1 - $0 == 10 })
        // The restart forgot the movement: a screen that is now still is not restarted again.
        #expect(run.restarts.count == 1)
    }

    @Test func aStreamFailureRestartsAtOnceThenSpacedFiveSecondsApartAndGivesUp() {
        let timeline =
            "fffff" + "x" + String(repeating: "-", count: 9) + "x" + String(repeating: "-", count: 60)
            + "x" + String(repeating: "-", count: 60) + "x" + String(repeating: "-", count: 60)
        let run = Run(timeline)
        let restarts = run.restarts
        #expect(restarts.first == 5)
        // The first restart reconnects the stream; the next, after it brought nothing, renews the session.
        let renewals = run.actions.compactMap { if case .restart(_, let renew) = $0.action { renew } else { nil } }
        #expect(renewals.prefix(2) == [false, true])
        // The second failure (tick 15) waits for the 5 s spacing: restart at tick 55.
        #expect(restarts.count >= 2 && restarts[1] == 55)
        let gaveUp = run.ticks { if case .giveUp = $0 { true } else { false } }
        #expect(gaveUp.count == 1, "three restarts without a frame end the capture")
    }

    @Test func framesAfterARestartClearTheFailureCount() {
        let timeline = "fx" + String(repeating: "-", count: 5) + "fffff" + "x" + String(repeating: "-", count: 60)
        let run = Run(timeline)
        #expect(run.ticks { if case .giveUp = $0 { true } else { false } }.isEmpty)
        #expect(run.restarts.count == 2)
        // Frames came between the two: the second restart reconnects again rather than renewing.
        let renewals = run.actions.compactMap { if case .restart(_, let renew) = $0.action { renew } else { nil } }
        #expect(renewals == [false, false])
    }

    @Test func aPersistentWatchNeverGivesUpAndBacksOffToAMinute() {
        // A desktop gone for five minutes: failures every tick after each restart.
        let gone = String(repeating: "x", count: 3000)
        let run = Run("fffff" + gone + "fff" + String(repeating: "-", count: 10)) { $0.persistent = true }
        #expect(run.ticks { if case .giveUp = $0 { true } else { false } }.isEmpty)
        let restarts = run.restarts
        let gaps = zip(restarts, restarts.dropFirst()).map { $1 - $0 }
        // 2 s apart for the first three, then 10, 20, 40, and a minute from then on.
        #expect(gaps.prefix(6) == [20, 20, 100, 200, 400, 600])
        #expect(gaps.dropFirst(6).allSatisfy { $0 == 600 }, "\(gaps)")
        // Every restart after the first asks the portal again (the stream brought nothing).
        let renewals = run.actions.compactMap { if case .restart(_, let renew) = $0.action { renew } else { nil } }
        #expect(renewals.first == false && renewals.dropFirst().allSatisfy { $0 }, "\(renewals)")
    }

    @Test func framesTheOldStreamGaveBeforeItStoppedDoNotHideAFailedRestart() {
        // The portal leaves the bus under a moving share. Its stream still gives two frames
        // between the last tick and the moment the restart stops it, and the restart fails
        // (the portal is not back yet). The watch must try again, not take those two frames
        // for the new stream's.
        let t0 = ContinuousClock.now
        var watch = CaptureWatch(now: t0)
        watch.persistent = true
        var now = t0
        for frames in 1...10 {
            now += .milliseconds(100)
            _ = watch.tick(now: now, totalFrames: frames)
        }
        let kept = watch.sessionClosed("xdg-desktop-portal left the session bus")
        #expect(kept)
        now += .milliseconds(100)
        let first = watch.tick(now: now, totalFrames: 10)
        #expect(first == [.restart(reason: "xdg-desktop-portal left the session bus", renewSession: true)])
        watch.restarted(now: now, totalFrames: 12)
        watch.streamFailed("xdg-desktop-portal is not running")
        var again: [Int] = []
        for tick in 1...30 {
            now += .milliseconds(100)
            for case .restart(_, let renew) in watch.tick(now: now, totalFrames: 12) {
                #expect(renew)
                again.append(tick)
                watch.restarted(now: now, totalFrames: 12)
            }
        }
        #expect(again == [20], "tried again 2 s after the failed restart")
    }

    @Test func aClosedSessionIsAskedForAgainOnlyByAPersistentWatch() {
        var kept: [Bool] = []
        let persistent = Run("fffff" + "c" + String(repeating: "-", count: 20), configure: { $0.persistent = true }) {
            kept.append($0)
        }
        #expect(kept == [true])
        let renewals = persistent.actions.compactMap {
            if case .restart(_, let renew) = $0.action { renew } else { nil }
        }
        #expect(renewals == [true], "a closed session is renewed at once, not reconnected")
        #expect(persistent.restarts == [5])
        kept = []
        let attended = Run("fffff" + "c" + String(repeating: "-", count: 20), configure: { _ in }) { kept.append($0) }
        #expect(kept == [false], "attended: the person or the desktop ended the share")
        #expect(attended.restarts.isEmpty)
    }
}
