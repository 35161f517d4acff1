import CallMedia
import GLibLoop
import ScreenCapture
import ScreenWatchdog
import ShareCore
import Signalling
import VideoSend

/// Owns a share's life, over WHIP or in a room. The camera director runs beside it for as long as
/// `run()`.
/// - WHIP: publishes a `WHIPShareSession` over the injected screen source and the camera director's
///   feed, follows it once a second, and with `reconnect` publishes again after a lost connection,
///   waiting as `Backoff` says (2 s, doubling to a minute; a share that stayed up a minute starts
///   from 2 s again). A portal capture closed by the session's end is opened again by its restore
///   token.
/// - A room: joins with a `CallSession` (sharing the screen or only watching), follows it once a
///   second, says each watchdog notice once, stops the screen after `shareFor` (the call goes on),
///   and leaves at `duration` or when stopped.
///
/// The command line parses, prints the events and forwards typed commands and signals; nothing of
/// a share's life is decided there.
public actor ShareController {
    public enum Destination: Sendable {
        case whip(WHIPShareSession.Options)
        /// A room of `sharectl serve`; with `shareScreen` off, a participant that only watches.
        case room(CallSession.Options)
    }

    public struct Configuration: Sendable {
        public var destination: Destination
        /// The screen, when it comes from a capture (the synthetic screen is made by the session).
        public var capture: ScreenCaptureSource?
        /// The camera director whose feed goes out beside the screen (or alone).
        public var camera: CameraDirector?
        /// Publish again after a lost connection instead of ending.
        public var reconnect = false
        /// Ends the share after this long (nil: until stopped).
        public var duration: Duration?
        /// In a room: stops sharing the screen after this long; the call goes on.
        public var shareFor: Duration?

        public init(destination: Destination) { self.destination = destination }
        public init(session: WHIPShareSession.Options) { self.init(destination: .whip(session)) }
    }

    /// What the command line is told, in order.
    public enum Event: Sendable {
        /// A session is up; `number` counts publishes (1: the first).
        case published(number: Int)
        /// The figures of the last second (WHIP).
        case stats(ShareStats)
        /// The figures of the last second (a room).
        case call(CallStatistics)
        /// Something to say as it stands (the capture's notices).
        case notice(String)
        /// Publishing (the first time with --reconnect, or again) failed; the next try comes after `retryIn`.
        case publishingFailed(reason: String, retryIn: Duration)
        /// The connection was lost and its WHIP session deleted; publishing again after `retryIn`.
        case connectionLost(reason: String, retryIn: Duration)
    }

    public enum Ending: Sendable, Equatable {
        /// Asked to stop, or `duration` is over.
        case stopped
        case failed(String)
    }

    public struct StartFailure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private let configuration: Configuration
    private let loop: GLibLoop
    private let logger: Logger
    private let stopRequested = Latch()
    private var session: WHIPShareSession?
    private var call: CallSession?
    /// In a room: the screen is shared now.
    private var sharing = false

    public init(configuration: Configuration, loop: GLibLoop, logger: Logger) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
    }

    /// Asks the share to end; `run()` returns `.stopped` within a moment.
    public nonisolated func stop() { stopRequested.open() }

    /// Publishes and follows the share until it is stopped or cannot go on. Throws when the first
    /// publish fails (nothing is left running).
    public func run(_ events: @escaping @Sendable (Event) -> Void) async throws(StartFailure) -> Ending {
        // The camera director is a child that ends with the share.
        let director = configuration.camera
        let outcome = await withTaskGroup(of: Void.self) { group in
            if let director { group.addTask { await director.run() } }
            defer { group.cancelAll() }
            do throws(StartFailure) {
                return Result<Ending, StartFailure>.success(try await share(director, events))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private func share(
        _ director: CameraDirector?, _ events: @escaping @Sendable (Event) -> Void
    ) async throws(StartFailure) -> Ending {
        guard case .whip(var options) = configuration.destination else {
            guard case .room(var options) = configuration.destination else { return .stopped }
            options.cameraFeed = director?.feed
            if let capture = configuration.capture { options.screenSource = capture }
            return try await joinAndFollow(options, events)
        }
        options.camera = director?.feed
        options.cameraFrameCount = director.map { director in
            let feed = director.feed
            return { Int(feed.framesDelivered) }
        }
        if let capture = configuration.capture { options.videoSource = capture }
        return try await publishAndFollow(options, events)
    }

    private func publishAndFollow(
        _ options: WHIPShareSession.Options,
        _ events: @escaping @Sendable (Event) -> Void
    ) async throws(StartFailure) -> Ending {
        let started = ContinuousClock.now
        var backoff = Backoff(first: .seconds(2), cap: .seconds(60))
        var publishes = 0
        while true {
            let session = WHIPShareSession(options: options, loop: loop, logger: logger)
            self.session = session
            publishes += 1
            // The session counts its seconds from its own start; the lines count from the share's.
            let offset = started.duration(to: .now).inSeconds
            do {
                try await session.start()
            } catch {
                self.session = nil
                // With --reconnect a first publish that fails on the network (a kiosk starting before
                // its link) is tried again like a later one; a refusal (a bad token, URL or answer)
                // still ends the share with the reason.
                guard publishes > 1 || configuration.reconnect && Self.worthPublishingAgain(error) else {
                    throw StartFailure(description: "could not start the share: \(error)")
                }
                let wait = backoff.failed()
                events(.publishingFailed(reason: "\(error)", retryIn: wait))
                if await stopRequested.wait(upTo: wait) { return .stopped }
                // The failed attempt's end may have closed the capture with it (ICE failed after the
                // screen was attached): open it again, or the next attempt shares a closed session.
                if let reason = await reopenCaptureIfClosed() { return .failed(reason) }
                continue
            }
            events(.published(number: publishes))
            let publishedAt = ContinuousClock.now
            let ending = await follow(session, started: started, offset: offset, events)
            self.session = nil
            await session.stop()
            guard case .lost(let reason) = ending, configuration.reconnect else {
                switch ending {
                case .stopped: return .stopped
                case .failed(let reason): return .failed(reason)
                case .lost(let reason): return .failed("the connection was lost: \(reason)")
                }
            }
            if publishedAt.duration(to: .now) >= .seconds(60) { backoff.succeeded() }
            let wait = backoff.failed()
            events(.connectionLost(reason: reason, retryIn: wait))
            if await stopRequested.wait(upTo: wait) { return .stopped }
            if let reason = await reopenCaptureIfClosed() { return .failed(reason) }
        }
    }

    /// A session's end closes the capture it was given: open it again (a portal by its restore
    /// token, no picker where one was saved) before the next publish. Nil when it is open, else why
    /// it could not be.
    private func reopenCaptureIfClosed() async -> String? {
        guard let capture = configuration.capture, capture.session?.isClosed ?? true else { return nil }
        do {
            try await capture.prepare()
            return nil
        } catch {
            return "the screen capture could not be opened again: \(error)"
        }
    }

    private enum FollowEnding { case stopped, failed(String), lost(String) }

    /// A failure the network may mend by itself: no answer, the endpoint unreachable or busy (408,
    /// 425, 429, 5xx), ICE or DTLS failing. Not: a refusal (another 4xx), an unusable answer, a
    /// bad URL or token, a part of ours that could not start.
    static func worthPublishingAgain(_ error: any Error) -> Bool {
        switch error {
        case let whip as WHIPError:
            switch whip {
            case .noAnswer, .unreachable, .busy: return true
            case .refused(_, let status, _, _): return [408, 425, 429].contains(status) || status >= 500
            default: return false
            }
        case let http as HTTPError:
            switch http {
            case .timedOut, .transport: return true
            default: return false
            }
        case let connection as PeerConnectionError:
            if case .connectionFailed = connection { return true }
            return false
        default:
            return false
        }
    }

    /// One session, once a second: its figures, the capture's notices, and whether it goes on.
    private func follow(
        _ session: WHIPShareSession, started: ContinuousClock.Instant, offset: Double,
        _ events: @escaping @Sendable (Event) -> Void
    ) async -> FollowEnding {
        var previous: ShareStats?
        while true {
            let asked = await stopRequested.wait(upTo: .seconds(1))
            var stats = await session.stats(previous: previous)
            if let director = configuration.camera, stats.camera != nil {
                stats.camera?.device = await director.using?.0.name ?? ""
            }
            previous = stats
            var line = stats
            line.t += offset
            events(.stats(line))
            for notice in configuration.capture?.takeNotices() ?? [] { events(.notice(notice)) }
            if let failure = configuration.capture?.failure { return .failed("the screen capture ended: \(failure)") }
            if asked { return .stopped }
            if let duration = configuration.duration, started.duration(to: .now) >= duration { return .stopped }
            if !(await session.isConnected) { return .lost(await session.connectionState) }
        }
    }

    // MARK: A room

    private func joinAndFollow(
        _ options: CallSession.Options,
        _ events: @escaping @Sendable (Event) -> Void
    ) async throws(StartFailure) -> Ending {
        let call: CallSession
        do {
            call = try CallSession(options: options, loop: loop, logger: logger)
        } catch {
            throw StartFailure(description: "\(error)")
        }
        do {
            try await call.start()
        } catch {
            await call.stop()
            throw StartFailure(description: "could not join the room: \(error)")
        }
        self.call = call
        sharing = options.shareScreen
        let started = ContinuousClock.now
        var noticesShown: Set<String> = []
        var shareStopped = false
        var ending = Ending.stopped
        var outage = RoomOutage()
        while true {
            let asked = await stopRequested.wait(upTo: .seconds(1))
            let stats = await call.statistics()
            events(.call(stats))
            let down = outage.observe(signallingUp: stats.signalling == "up", now: .now)
            if options.shareScreen, let reason = RoomOutage.ending(downFor: down, reconnect: configuration.reconnect) {
                ending = .failed(reason)
                break
            }
            let notices = (stats.watchdog?.notices ?? []) + stats.audioNotices
            for notice in notices where !noticesShown.contains(notice) { events(.notice("Notice: \(notice)")) }
            noticesShown = Set(notices)
            for notice in configuration.capture?.takeNotices() ?? [] { events(.notice(notice)) }
            if let failure = configuration.capture?.failure {
                ending = .failed("the screen capture ended: \(failure)")
                break
            }
            if asked { break }
            let elapsed = started.duration(to: .now)
            if let duration = configuration.duration, elapsed >= duration { break }
            if let shareFor = configuration.shareFor, !shareStopped, sharing, elapsed >= shareFor {
                shareStopped = true
                sharing = false
                events(.notice("Stopping the share (the call goes on)…"))
                await call.setSharing(false)
            }
        }
        self.call = nil
        await call.stop()
        return ending
    }

    /// In a room that shares a screen: stops the share, or shares again (the call goes on).
    /// Returns whether it shares now; nil where there is no screen to share.
    public func toggleSharing() async -> Bool? {
        if case .whip(let options) = configuration.destination, options.room != nil, let session {
            return await toggleJanusScreen(session)
        }
        guard let call, case .room(let options) = configuration.destination, options.shareScreen else { return nil }
        if !sharing, let capture = configuration.capture, capture.session == nil {
            // Stopping the share closed the capture: open it again (a portal by its restore
            // token, no picker where one was saved).
            do {
                try await capture.prepare()
            } catch {
                logger.warning("the screen capture could not be opened again: \(error)")
                return false
            }
        }
        sharing.toggle()
        await call.setSharing(sharing)
        return sharing
    }

    /// In a room on Janus: the screen leaves the VideoRoom, or is published there anew. A capture
    /// the pause closed (a portal session) is opened again first, by its restore token.
    private func toggleJanusScreen(_ session: WHIPShareSession) async -> Bool? {
        if let capture = configuration.capture, capture.session?.isClosed ?? true {
            do {
                try await capture.prepare()
            } catch {
                logger.warning("the screen capture could not be opened again: \(error)")
                return false
            }
        }
        return await session.toggleScreen()
    }

    /// In a room: the last picture decoded of each participant's screen and camera.
    public func pictures() async -> [(name: String, what: String, frame: VideoFrame)] {
        await call?.pictures() ?? []
    }

    // MARK: Commands (typed on standard input), answered in words

    public func setPolicy(_ policy: ScreenSendPolicy) async -> String {
        if let call { return await call.setScreenPolicy(policy) }
        guard let session else { return "no share is running" }
        await session.setPolicy(policy)
        return "Send policy: \(policy.label)"
    }

    /// `mute` / `unmute`: digital silence goes in place of the microphone (or the tone) while
    /// muted; the stream, its meter and everyone's path to us go on.
    public func setMuted(_ on: Bool) -> String {
        let sendsAudio =
            switch configuration.destination {
            case .room(let options): options.audio != .none
            case .whip(let options): options.audio
            }
        guard sendsAudio else { return "nothing to \(on ? "mute" : "unmute"): this share sends no audio" }
        let changed = AudioMute.shared.set(on)
        switch (on, changed) {
        case (true, true): return "Muted: the call hears silence from you"
        case (true, false): return "Already muted"
        case (false, true): return "Unmuted: the call hears you again"
        case (false, false): return "Not muted"
        }
    }

    public func requestKeyframe() async -> String {
        if let call { return await call.requestScreenKeyframes() }
        guard let session else { return "no share is running" }
        await session.requestKeyframe()
        return "Keyframe asked for"
    }

    public func injectFault(_ fault: FaultDrill) async -> String {
        if let call { return await call.injectFault(fault) }
        guard let session else { return "no share is running" }
        return await session.injectFault(fault)
    }
}
