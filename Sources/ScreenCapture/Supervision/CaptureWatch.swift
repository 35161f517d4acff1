/// The rules that keep a screen capture honest, as a state machine on a clock the caller passes.
///
/// - A still screen sends nothing through the portal, not even a first frame: say so once when no
///   first frame has come `firstFrameWait` after a start.
/// - While still, repeat the last frame once a second (so a receiver that asks for a keyframe gets
///   one and a viewer does not freeze on "no signal").
/// - A capture that was moving (frames at `movingRate` or more in the second before it went
///   quiet) and then sends nothing for `silenceLimit`, or a stream that fails, is restarted on the
///   same content (the same stream first; after a restart that brought nothing, a new portal session
///   from the restore token). A restart forgets the movement, so a screen that is simply still afterwards is
///   not restarted again and again. Restarts are at least `restartSpacing` apart; `maxFailedRestarts`
///   restarts in a row without a frame between them end the capture.
/// - `persistent` (an unattended share: a kiosk) never gives up: its first `maxFailedRestarts`
///   restarts come `persistentSpacing` apart (a desktop service restarting is back within
///   seconds), past them the restarts go on, twice as far apart each time up to `longestSpacing`, and a portal session closed
///   from outside (the portal or the compositor restarted, PipeWire restarted under it) is asked
///   for again from the restore token instead of ending the capture.
public struct CaptureWatch: Sendable {
    public enum Action: Sendable, Hashable {
        case sayNoFirstFrame
        case repeatLastFrame
        /// Restart the capture; `renewSession`: the last restart brought no frame, so ask the portal
        /// for the same content again (restore token) instead of reconnecting to the same stream.
        case restart(reason: String, renewSession: Bool)
        case giveUp(reason: String)
    }

    public var firstFrameWait: Duration = .seconds(2)
    public var repeatInterval: Duration = .seconds(1)
    public var silenceLimit: Duration = .seconds(3)
    public var restartSpacing: Duration = .seconds(5)
    public var movingRate = 5
    public var maxFailedRestarts = 3
    public var persistent = false
    public var longestSpacing: Duration = .seconds(60)
    public var persistentSpacing: Duration = .seconds(2)

    private var startedAt: ContinuousClock.Instant
    private var framesSeen = 0
    private var saidNoFirstFrame = false
    private var frameSinceStart = false
    private var lastRealFrame: ContinuousClock.Instant?
    private var lastDelivery: ContinuousClock.Instant?
    /// Arrival times of recent real frames (as seen at ticks), for the "was moving" rule.
    private var recent: [(at: ContinuousClock.Instant, count: Int)] = []
    private var lastRestart: ContinuousClock.Instant?
    private var restartsWithoutFrame = 0
    private var pendingFailure: String?
    /// The next restart must ask the portal for a new session (the last one was closed).
    private var renewNext = false

    public init(now: ContinuousClock.Instant) {
        startedAt = now
    }

    /// The stream failed (error state, disconnected): restart at the next tick that may.
    public mutating func streamFailed(_ reason: String) {
        pendingFailure = reason
    }

    /// The portal session was closed from outside: for a persistent watch, restart with a new
    /// session (restore token) at the next tick that may. Returns false when the capture should end
    /// instead (not persistent: the person or the desktop ended the share).
    public mutating func sessionClosed(_ reason: String) -> Bool {
        guard persistent else { return false }
        pendingFailure = reason
        renewNext = true
        return true
    }

    /// The spacing before the next restart: `restartSpacing`, doubling for a persistent watch past
    /// `maxFailedRestarts` restarts without a frame, up to `longestSpacing`.
    var spacing: Duration {
        let over = restartsWithoutFrame - maxFailedRestarts
        guard persistent else { return restartSpacing }
        guard over >= 0 else { return persistentSpacing }
        var spacing = restartSpacing
        for _ in 0...min(over, 8) where spacing < longestSpacing { spacing *= 2 }
        return min(spacing, longestSpacing)
    }

    /// The capture was restarted at `now`: no memory of movement (the still-screen notice is said
    /// once per capture, not again after a restart). `totalFrames`: the real frames counted once the
    /// old stream stopped. Frames it delivered after the last tick are its own, so they do not count
    /// as the new stream's first (a restart that failed would otherwise look as if it worked, and
    /// its failure would be forgotten).
    public mutating func restarted(now: ContinuousClock.Instant, totalFrames: Int) {
        framesSeen = max(framesSeen, totalFrames)
        startedAt = now
        recent.removeAll()
        lastRestart = now
        restartsWithoutFrame += 1
        pendingFailure = nil
    }

    /// `totalFrames`: real frames the stream has delivered so far (the counter only grows).
    public mutating func tick(now: ContinuousClock.Instant, totalFrames: Int) -> [Action] {
        var actions: [Action] = []
        if totalFrames > framesSeen {
            recent.append((now, totalFrames - framesSeen))
            framesSeen = totalFrames
            lastRealFrame = now
            lastDelivery = now
            restartsWithoutFrame = 0
            frameSinceStart = true
            // Frames flow again: a stream failure said before them is over (a closed session is not).
            if !renewNext { pendingFailure = nil }
        }
        recent.removeAll { now - $0.at > silenceLimit + .seconds(2) }

        if let failure = pendingFailure {
            if restartsWithoutFrame >= maxFailedRestarts, !persistent {
                pendingFailure = nil
                return [.giveUp(reason: "\(failure); \(restartsWithoutFrame) restarts brought no frame")]
            }
            if lastRestart.map({ now - $0 >= spacing }) ?? true {
                pendingFailure = nil
                actions.append(.restart(reason: failure, renewSession: renewNext || restartsWithoutFrame > 0))
                renewNext = false
                return actions
            }
        }

        if !frameSinceStart, !saidNoFirstFrame, now - startedAt >= firstFrameWait {
            saidNoFirstFrame = true
            actions.append(.sayNoFirstFrame)
        }

        if let last = lastRealFrame, now - last >= silenceLimit, wasMoving(before: last),
            lastRestart.map({ now - $0 >= spacing }) ?? true
        {
            recent.removeAll()
            actions.append(
                .restart(
                    reason: "no frame for \(Self.seconds(now - last)) s after steady movement",
                    renewSession: restartsWithoutFrame > 0))
            return actions
        }

        if let delivered = lastDelivery, now - delivered >= repeatInterval {
            lastDelivery = now
            actions.append(.repeatLastFrame)
        }
        return actions
    }

    private func wasMoving(before last: ContinuousClock.Instant) -> Bool {
        let window = recent.filter { last - $0.at <= .seconds(1) }
        return window.reduce(0) { $0 + $1.count } >= movingRate
    }

    private static func seconds(_ d: Duration) -> Int { Int(d.components.seconds) }
}
