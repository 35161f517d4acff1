import CallsClient
import ScreenWatchdog
import ShareCore
import Testing

/// The room call's watchdog link: the call's figures become the ladders' inputs, and the ladders'
/// steps become what the call does. The real `ScreenWatchdog` (both ladders) runs over a call
/// that records what it is told; time moves only as `tick(now:)` is given it.
@Suite struct CallWatchdogLinkTests {
    /// Stands in for `CallSession`: the test sets its figures and reads what was carried out.
    final class RecordingCall: CallWatchdogTarget {
        private let state = Locked<(figures: CallWatchdogFigures, done: [CallWatchdogCommand])>(
            (CallWatchdogFigures(captureFrames: 0, people: []), []))
        func set(_ figures: CallWatchdogFigures) { state.withLock { $0.figures = figures } }
        func update(_ change: (inout CallWatchdogFigures) -> Void) { state.withLock { change(&$0.figures) } }
        var done: [CallWatchdogCommand] { state.withLock { $0.done } }
        func watchdogFigures() async -> CallWatchdogFigures { state.withLock { $0.figures } }
        func watchdogCarryOut(_ command: CallWatchdogCommand) async throws {
            state.withLock { $0.done.append(command) }
        }
    }

    static func bea(
        framesIn: Int = 300, encoded: Int = 300, sent: Int = 300, keyframes: Int = 3,
        stalled: Bool? = false, age: Duration = .seconds(20)
    ) -> CallWatchdogFigures.Person {
        .init(
            id: "p2", name: "Bea", framesIn: framesIn, framesEncoded: encoded, framesSent: sent,
            keyframesSent: keyframes,
            sendingFor: age, reportsStalled: stalled)
    }

    @Test func theFiguresBecomeTheLaddersInputsPerConnectionAndPerson() {
        var cid = Self.bea(stalled: nil)
        cid.id = "p3"
        cid.name = "Cid"
        cid.linkLimited = true
        let reading = CallWatchdogLink.reading(.init(captureFrames: 812, people: [Self.bea(stalled: true), cid]))
        #expect(reading.sender.captureFrames == 812)
        #expect(
            reading.sender.connections["p2"]
                == ConnectionCounters(
                    framesIn: 300, framesEncoded: 300, framesSent: 300,
                    linkLimited: false, age: .seconds(20)))
        #expect(reading.sender.connections["p3"]?.linkLimited == true)
        #expect(
            reading.people["p2"] == PersonObservation(name: "Bea", stalled: true, framesSent: 300, keyframesSent: 3))
        // No report of our screen yet is not a stall.
        #expect(reading.people["p3"]?.stalled == false)
        #expect(CallWatchdogLink.reading(.init(captureFrames: nil, people: [])).sender.captureFrames == nil)
    }

    @Test func everyStepComesToItsCallOrToNothing() {
        #expect(CallWatchdogLink.command(for: .restartCapture) == .restartCapture)
        #expect(CallWatchdogLink.command(for: .requestKeyframe("p2")) == .keyframe(person: "p2"))
        #expect(
            CallWatchdogLink.command(for: .freshEncoder("p2", scale: 2.0 / 3.0))
                == .freshEncoder(person: "p2", scale: 2.0 / 3.0, seconds: 30))
        #expect(CallWatchdogLink.command(for: .restoreScale("p2")) == .freshEncoder(person: "p2", scale: 1, seconds: 0))
        #expect(CallWatchdogLink.command(for: .newTransceiver("p2")) == .rebuild(person: "p2"))
        #expect(CallWatchdogLink.command(for: .rebuild("p2")) == .rebuild(person: "p2"))
        #expect(CallWatchdogLink.command(for: .shareAgain) == .shareAgain)
        for said in [LadderAction.giveUp("p2"), .notice("p2", "x"), .recovered("p2"), .held("p2", step: "rebuild")] {
            #expect(CallWatchdogLink.command(for: said) == nil)
        }
    }

    /// Bea reports our screen stalled while frames keep leaving for her: keyframes, then a rebuild
    /// for her alone, then a share again for everyone, then the give-up notice.
    @Test func aStalledReportClimbsToARebuildForThatPersonThenAShareAgain() async {
        let call = RecordingCall()
        let link = CallWatchdogLink(target: call)
        let start = ContinuousClock.now
        let dog = ScreenWatchdog(probe: link, effector: link, logger: .disabled, origin: start)
        var t = 0, frames = 300, keyframes = 3, capture = 1000
        func second(stalled: Bool) async {
            t += 1
            frames += 15
            capture += 15
            call.set(
                .init(
                    captureFrames: capture,
                    people: [
                        Self.bea(
                            framesIn: frames, encoded: frames, sent: frames,
                            keyframes: keyframes, stalled: stalled)
                    ]))
            await dog.tick(now: start + .seconds(t))
        }
        for _ in 0..<3 { await second(stalled: false) }
        #expect(call.done.isEmpty)
        await second(stalled: true)
        #expect(call.done == [.keyframe(person: "p2")])
        #expect(dog.status.notices == ["Bea's view of your screen stalled — recovering"])
        keyframes += 1  // the keyframe left
        for _ in 0..<6 { await second(stalled: true) }
        #expect(!call.done.contains(.rebuild(person: "p2")))
        await second(stalled: true)
        #expect(call.done.last == .rebuild(person: "p2"))
        #expect(dog.status.lastStep?.action == "rebuild" && dog.status.lastStep?.subject == "p2")
        #expect(dog.status.notices == ["Restarting your share for Bea…"])
        // The rebuilt section's counters start again from zero.
        frames = 0
        keyframes = 1
        for _ in 0..<9 { await second(stalled: true) }
        #expect(!call.done.contains(.shareAgain))
        await second(stalled: true)
        #expect(call.done.last == .shareAgain)
        for _ in 0..<10 { await second(stalled: true) }
        #expect(dog.status.state == "gaveUp")
        #expect(dog.status.notices == ["Couldn't restore Bea's view — try Stop and Share again"])
        #expect(call.done.filter { $0 == .rebuild(person: "p2") }.count == 1)
    }

    /// A connection that takes frames in and encodes none: keyframe, fresh encoder a third
    /// smaller for 30 s, new transceiver (a rebuild of that person's section), 3 s apart; a silent
    /// capture is restarted.
    @Test func aStuckEncoderClimbsTheSenderSideStepsOnThatConnection() async {
        let call = RecordingCall()
        let link = CallWatchdogLink(target: call)
        let start = ContinuousClock.now
        let dog = ScreenWatchdog(probe: link, effector: link, logger: .disabled, origin: start)
        var t = 0, framesIn = 300
        for _ in 0..<14 {
            t += 1
            framesIn += 15
            call.set(
                .init(captureFrames: 1000 + framesIn, people: [Self.bea(framesIn: framesIn, encoded: 300, sent: 300)]))
            await dog.tick(now: start + .seconds(t))
        }
        #expect(call.done.first == .keyframe(person: "p2"))
        #expect(call.done.contains(.freshEncoder(person: "p2", scale: 2.0 / 3.0, seconds: 30)))
        #expect(call.done.last == .rebuild(person: "p2"))
        #expect(call.done.count == 3)

        // The capture stops: restarted after 3 s of silence.
        for _ in 0..<3 {
            t += 1
            await dog.tick(now: start + .seconds(t))
        }
        #expect(call.done.last == .restartCapture)
    }

    @Test func aDetachedLinkReadsNothingAndDoesNothing() async throws {
        let call = RecordingCall()
        call.set(.init(captureFrames: 5, people: [Self.bea()]))
        let link = CallWatchdogLink(target: call)
        link.detach()
        #expect(await link.read().people.isEmpty)
        try await link.perform(.shareAgain)
        #expect(call.done.isEmpty)
    }
}
