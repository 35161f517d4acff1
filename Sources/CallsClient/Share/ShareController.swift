import GLibLoop
import ScreenCapture
import ScreenWatchdog
import ShareCore
import VideoSend

/// Owns a WHIP share's life: publishes a `WHIPShareSession` over the injected screen source and
/// the camera director's feed, follows it once a second, and with `reconnect` publishes again
/// after a lost connection, waiting as `Backoff` says (2 s, doubling to a minute; a share that
/// stayed up a minute starts from 2 s again). A portal capture closed by the session's end is
/// opened again by its restore token. The camera director runs beside it for as long as `run()`.
///
/// The command line parses, prints the events and forwards typed commands; nothing of a share's
/// life is decided there.
public actor ShareController {
    public struct Configuration: Sendable {
        public var session: WHIPShareSession.Options
        /// The screen, when it comes from a capture (the synthetic screen is made by the session).
        public var capture: ScreenCaptureSource?
        /// The camera director whose feed goes out beside the screen (or alone).
        public var camera: CameraDirector?
        /// Publish again after a lost connection instead of ending.
        public var reconnect = false
        /// Ends the share after this long (nil: until stopped).
        public var duration: Duration?

        public init(session: WHIPShareSession.Options) { self.session = session }
    }

    /// What the command line is told, in order.
    public enum Event: Sendable {
        /// A session is up; `number` counts publishes (1: the first).
        case published(number: Int)
        /// The figures of the last second.
        case stats(ShareStats)
        /// Something to say as it stands (the capture's notices).
        case notice(String)
        /// Publishing again failed; the next try comes after `retryIn`.
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
    /// Sessions that ended are kept until the process exits instead of being torn down object by
    /// object: once in about sixty gate runs, freeing the C libraries' objects after a share had
    /// ended showed heap corruption (glibc's malloc_consolidate check) that is not yet found. Each
    /// was stopped and its WHIP session deleted; only the final frees are skipped.
    private var ended: [WHIPShareSession] = []

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
        let director = configuration.camera
        let camera = Task { await director?.run() }
        defer { camera.cancel() }
        var options = configuration.session
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
            ended.append(session)
            publishes += 1
            // The session counts its seconds from its own start; the lines count from the share's.
            let offset = started.duration(to: .now).inSeconds
            do {
                try await session.start()
            } catch {
                guard publishes > 1 else { throw StartFailure(description: "could not start the share: \(error)") }
                let wait = backoff.failed()
                events(.publishingFailed(reason: "\(error)", retryIn: wait))
                if await stopRequested.wait(upTo: wait) { return .stopped }
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
            if let capture = configuration.capture {
                // The last session's end closed the capture: open it again (a portal by its
                // restore token, no picker where one was saved).
                do {
                    try await capture.prepare()
                } catch {
                    return .failed("the screen capture could not be opened again: \(error)")
                }
            }
        }
    }

    private enum FollowEnding { case stopped, failed(String), lost(String) }

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

    // MARK: Commands (typed on standard input)

    public func setPolicy(_ policy: ScreenSendPolicy) async {
        await session?.setPolicy(policy)
    }

    public func requestKeyframe() async {
        await session?.requestKeyframe()
    }

    public func injectFault(_ fault: FaultDrill) async -> String {
        guard let session else { return "no share is running" }
        return await session.injectFault(fault)
    }
}
