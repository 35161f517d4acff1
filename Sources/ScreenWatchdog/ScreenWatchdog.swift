import ShareCore
import StatsLine

/// What the watchdog reads once a second: the media counters (atomics the media threads keep)
/// and each person's latest media report. The call session implements it.
public protocol WatchdogProbe: Sendable {
    func read() async -> WatchdogReading
}

public struct WatchdogReading: Sendable, Equatable {
    public var sender: SenderCounters
    /// By person id: what they last reported and what left for them.
    public var people: [String: PersonObservation]

    public init(sender: SenderCounters, people: [String: PersonObservation] = [:]) {
        self.sender = sender
        self.people = people
    }
}

/// Carries out the watchdog's steps. The call session implements it; `held` and `recovered`
/// need nothing done. A step that fails throws; the watchdog logs it and goes on.
public protocol WatchdogEffector: Sendable {
    func perform(_ action: LadderAction) async throws
}

/// The screen watchdog: once a second it reads the counters, runs the sender-side ladder
/// (`SenderLadder`) and the receiver-driven ladder (`ReceiverLadder`), logs every step with its
/// reason and carries the steps out. Decisions are the ladders'; this actor only runs them.
///
/// Its owner starts `run()` in a task group and cancels it when the share stops. The clock is a
/// parameter so tests can drive it; `tick(now:)` is one look.
public actor ScreenWatchdog<C: Clock> where C.Instant == ContinuousClock.Instant {
    public static var interval: Duration { .seconds(1) }

    private let probe: any WatchdogProbe
    private let effector: any WatchdogEffector
    private let logger: Logger
    private let clock: C
    private let origin: ContinuousClock.Instant
    private var sender = SenderLadder()
    private var receiver = ReceiverLadder()
    private let published = Locked(WatchdogStatus())

    /// `origin`: when the share started (a step's `t` counts from it); the clock's now if nil.
    public init(
        probe: any WatchdogProbe, effector: any WatchdogEffector, logger: Logger, clock: C,
        origin: ContinuousClock.Instant? = nil
    ) {
        self.probe = probe
        self.effector = effector
        self.logger = logger
        self.clock = clock
        self.origin = origin ?? clock.now
    }

    /// What the watchdog is doing, readable from any thread (the stats line reads it once a second).
    public nonisolated var status: WatchdogStatus { published.withLock { $0 } }

    /// Looks once a second until cancelled (then throws `CancellationError`).
    public func run() async throws {
        logger.info("screen watchdog watching", ["watchdog.state": "watching"])
        var next = clock.now + Self.interval
        while true {
            try await clock.sleep(until: next, tolerance: nil)
            await tick(now: clock.now)
            next = next + Self.interval
            if next < clock.now { next = clock.now + Self.interval }  // a late wake does not make up ticks
        }
    }

    /// One look: reads, decides, logs and carries out. Returns the steps taken.
    @discardableResult
    public func tick(now: ContinuousClock.Instant) async -> [LadderStep] {
        let reading = await probe.read()
        let steps = sender.tick(now: now, counters: reading.sender) + receiver.tick(now: now, people: reading.people)
        publish(steps, now: now)
        for step in steps {
            var metadata = [
                "watchdog.action": step.action.name, "watchdog.rung": currentRung,
                "watchdog.state": status.state
            ]
            if let subject = step.action.subject { metadata["watchdog.subject"] = subject }
            switch step.action {
            case .notice(_, let text):
                logger.info(
                    text.map { "notice: \($0)" } ?? "notice cleared",
                    metadata.merging(["watchdog.reason": step.reason]) { $1 })
            case .held, .recovered:
                logger.info("\(step)", metadata)
            default:
                logger.notice("\(step)", metadata)
            }
            do {
                try await effector.perform(step.action)
            } catch {
                logger.warning("\(step.action.name) failed: \(error)", metadata)
            }
        }
        return steps
    }

    private var currentRung: String {
        receiver.rung != .none ? receiver.rung.description : sender.rung.description
    }

    private func publish(_ steps: [LadderStep], now: ContinuousClock.Instant) {
        let seconds = (now - origin).inSeconds
        let state =
            receiver.rung == .giveUp
            ? "gaveUp"
            : receiver.rung != .none || sender.rung != .none
                ? "recovering"
                : !sender.scaledDown.isEmpty ? "scaledDown" : "watching"
        let rung = currentRung
        let notices = receiver.notices.sorted { $0.key < $1.key }.map(\.value)
        published.withLock { status in
            status.state = state
            status.rung = rung
            status.notices = notices
            for step in steps {
                if case .notice = step.action { continue }
                status.steps += 1
                let record = WatchdogStatus.Step(
                    number: status.steps, t: seconds, action: step.action.name,
                    subject: step.action.subject, reason: step.reason)
                status.lastStep = record
                status.recent.append(record)
            }
            if status.recent.count > WatchdogStatus.recentLimit {
                status.recent.removeFirst(status.recent.count - WatchdogStatus.recentLimit)
            }
        }
    }
}

extension ScreenWatchdog where C == ContinuousClock {
    public init(
        probe: any WatchdogProbe, effector: any WatchdogEffector, logger: Logger,
        origin: ContinuousClock.Instant? = nil
    ) {
        self.init(probe: probe, effector: effector, logger: logger, clock: ContinuousClock(), origin: origin)
    }
}
