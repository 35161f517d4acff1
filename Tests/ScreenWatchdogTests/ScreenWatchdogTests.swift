import ScreenWatchdog
import ShareCore
import StatsLine
import TestSupport
import Testing

/// The actor's plumbing: reading through the probe, carrying out through the effector, logging
/// each step with its reason, publishing its status, and `run()` on a manual clock. The rules
/// themselves are held by the ladders' own tests; the probe and effector here are in-test fakes.
@Suite struct ScreenWatchdogTests {
    final class FakeProbe: WatchdogProbe {
        let reading = Locked(WatchdogReading(sender: SenderCounters(captureFrames: 0)))
        let reads = Watched(0)
        func read() async -> WatchdogReading {
            reads.change { $0 += 1 }
            return reading.withLock { $0 }
        }
        /// One more second of a healthy capture and connection "bea", with her report.
        func advance(second: Int, encoding: Bool, beaStalled: Bool) {
            reading.withLock { reading in
                let frames = second * 30
                reading.sender = SenderCounters(
                    captureFrames: frames,
                    connections: [
                        "bea": ConnectionCounters(
                            framesIn: frames, framesEncoded: encoding ? frames : 0,
                            framesSent: encoding ? frames : 0, age: .seconds(30 + second))
                    ])
                reading.people = [
                    "bea": PersonObservation(
                        name: "Bea", stalled: beaStalled, framesSent: frames,
                        keyframesSent: second >= 1 ? 1 : 0)
                ]
            }
        }
    }

    struct Refused: Error, CustomStringConvertible { var description: String { "the encoder would not start" } }

    final class FakeEffector: WatchdogEffector {
        let done = Watched<[LadderAction]>([])
        let refuse: String?
        init(refuse: String? = nil) { self.refuse = refuse }
        func perform(_ action: LadderAction) async throws {
            if action.name == refuse { throw Refused() }
            done.change { $0.append(action) }
        }
    }

    @Test func aStallReportIsCarriedOutLoggedWithItsReasonAndPublished() async {
        let probe = FakeProbe(), effector = FakeEffector(), log = LogCapture()
        let start = ContinuousClock.now
        let watchdog = ScreenWatchdog(
            probe: probe, effector: effector, logger: log.logger(), clock: ManualClock(start: start),
            origin: start)
        #expect(watchdog.status.state == "watching")
        for second in 0...7 {
            probe.advance(second: second, encoding: true, beaStalled: true)
            await watchdog.tick(now: start + .seconds(second))
        }
        let done = effector.done.value
        #expect(done.first == .requestKeyframe("bea"))
        #expect(done.contains(.notice("bea", "Bea's view of your screen stalled — recovering")))
        #expect(done.contains(.rebuild("bea")))
        let status = watchdog.status
        #expect(status.state == "recovering")
        #expect(status.rung == "rebuild")
        #expect(
            status.lastStep
                == WatchdogStatus.Step(
                    number: status.steps, t: 7, action: "rebuild", subject: "bea",
                    reason: "Bea still reports the screen stalled 6 s after the first keyframe left"))
        #expect(status.notices == ["Restarting your share for Bea…"])
        #expect(status.recent.map(\.action) == ["keyframe", "keyframe", "keyframe", "keyframe", "rebuild"])
        let rebuild = log.all.first { $0.metadata["watchdog.action"] == "rebuild" }
        #expect(rebuild?.level == .notice)
        #expect(
            rebuild?.message == "rebuild bea: Bea still reports the screen stalled 6 s after the first keyframe left")
        #expect(rebuild?.metadata["watchdog.rung"] == "rebuild")
        #expect(rebuild?.metadata["watchdog.subject"] == "bea")
        #expect(
            status.statusText(now: 8)
                == "watchdog recovering at rebuild: rebuild bea 1 s ago (Bea still reports the screen stalled 6 s after the first keyframe left)"
        )
    }

    @Test func aStepThatFailsIsLoggedAndTheWatchdogGoesOn() async {
        let probe = FakeProbe(), effector = FakeEffector(refuse: "keyframe"), log = LogCapture()
        let start = ContinuousClock.now
        let watchdog = ScreenWatchdog(
            probe: probe, effector: effector, logger: log.logger(), clock: ManualClock(start: start))
        for second in 0...10 {
            probe.advance(second: second, encoding: false, beaStalled: false)
            await watchdog.tick(now: start + .seconds(second))
        }
        // The sender-side ladder: stuck from 1 s, keyframe at 6 s (refused), fresh encoder at 9 s.
        #expect(effector.done.value == [.freshEncoder("bea", scale: 2.0 / 3)])
        #expect(
            log.all.contains { $0.level == .warning && $0.message == "keyframe failed: the encoder would not start" })
        #expect(watchdog.status.rung == "freshEncoder")
        #expect(watchdog.status.steps == 2)
    }

    @Test func runLooksOnceASecondOnItsClock() async throws {
        let probe = FakeProbe(), effector = FakeEffector()
        let clock = ManualClock()
        let watchdog = ScreenWatchdog(probe: probe, effector: effector, logger: .disabled, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await watchdog.run() }
            // A wait that runs out throws from here: no sleeper may then hold the group open.
            defer { group.cancelAll(); clock.cancelSleepers() }
            // Eight looks: Bea stalled from the first, her first keyframe left before the second,
            // so the rebuild comes at the eighth.
            for look in 1...8 {
                try await clock.untilSleeping(1, within: Self.hangGuard)
                probe.advance(second: look - 1, encoding: true, beaStalled: true)
                clock.advance(by: .seconds(1))
                try await probe.reads.until("look \(look)", within: Self.hangGuard) { $0 == look }
            }
            try await effector.done.until("a rebuild for Bea", within: Self.hangGuard) { $0.contains(.rebuild("bea")) }
            try await clock.untilSleeping(1, within: Self.hangGuard)
            group.cancelAll()
            clock.cancelSleepers()
            await #expect(throws: CancellationError.self) { try await group.next() }
        }
        #expect(probe.reads.value == 8, "no look without the clock moving")
    }

    /// Each wait's limit: a generous hang guard instead of a timing assertion.
    static let hangGuard: Duration = .seconds(90)
}
