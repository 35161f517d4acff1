import Foundation
import GLibLoop
import ShareCore
import Synchronization

/// A screen as a frame source: a portal ScreenCast session (or any PipeWire video node) read by a
/// `PipeWireCapture`, watched by `CaptureWatch` on a thread of its own. It repeats the last frame
/// once a second while the screen is still, says when no first frame comes, restarts a capture
/// that stopped on the same content (a new stream on the same node; if that fails, a new portal
/// session from the restore token, never a picker), and ends with a reason when the session is
/// closed from outside — unless it is unattended (a kiosk): then a closed session is asked for
/// again from the restore token, and restarts go on, backing off to once a minute, until the
/// desktop gives the screen back (`CaptureWatch.persistent`).
///
/// `open()` (or `prepare()`) sets up the portal session before the share connects, so a refusal
/// ends the share before anything is sent; `start(deliver:)` starts the frames.
public final class ScreenCaptureSource: Sendable {
    public enum Target: Sendable {
        case portal(ScreenCastSession.Options)
        case node(UInt32)
    }

    private struct State {
        var session: ScreenCastSession?
        var capture: PipeWireCapture?
        var deliver: (@Sendable (VideoFrame) -> Void)?
        var lastFrame: VideoFrame?
        var notices: [String] = []
        var failure: String?
        var negotiated: String?
        var framesBefore = 0  // real frames of the captures before the current one
        var corruptedBefore = 0
        var running = false
        var pendingStreamFailures: [String] = []
        var pendingSessionClosed: [String] = []
    }

    public let target: Target
    private let logger: Logger
    private let loop: GLibLoop?
    private let state = Locked(State())
    private let delivered = Atomic<Int>(0)
    private let repeated = Atomic<Int>(0)
    private let restarts = Atomic<Int>(0)
    private let sequence = Atomic<UInt64>(0)
    private let watchDone = DispatchSemaphore(value: 0)

    /// An unattended portal capture never ends by itself (see the type's description).
    public var persistent: Bool {
        if case .portal(let options) = target { options.unattended } else { false }
    }

    /// `loop`: the GLib loop thread GDBus runs on (required for a portal target).
    public init(target: Target, loop: GLibLoop?, logger: Logger) {
        self.target = target
        self.loop = loop
        self.logger = logger
    }

    /// Frames handed on so far (real ones and repeats).
    public var frameCount: Int { delivered.load(ordering: .relaxed) }
    public var repeatedFrames: Int { repeated.load(ordering: .relaxed) }
    public var restartCount: Int { restarts.load(ordering: .relaxed) }
    public var realFrames: Int {
        state.withLock { $0.framesBefore + ($0.capture?.counters.frames.load(ordering: .relaxed) ?? 0) }
    }
    /// Buffers the stream marked corrupted (skipped).
    public var corruptedBuffers: Int {
        state.withLock { $0.corruptedBefore + ($0.capture?.counters.corrupted.load(ordering: .relaxed) ?? 0) }
    }
    /// Why the capture ended by itself (session closed, stream gone for good); nil while fine.
    public var failure: String? { state.withLock { $0.failure } }
    public var session: ScreenCastSession? { state.withLock { $0.session } }
    public var negotiatedFormat: String? { state.withLock { $0.negotiated } }

    /// Things to tell the person (no first frame yet, a restart), each once.
    public func takeNotices() -> [String] {
        state.withLock { s in
            defer { s.notices.removeAll() }; return s.notices
        }
    }

    /// Opens the portal session (picker or restore token). Blocks: call from a plain thread.
    public func open() throws(PortalError) {
        guard case .portal(let options) = target else { return }
        guard let loop else { throw .noSessionBus("no GLib loop to run GDBus on") }
        let session = try ScreenCastSession.open(loop: loop, options: options, logger: logger) { [weak self] why in
            self?.sessionClosed(why)
        }
        state.withLock { $0.session = session }
    }

    /// `open()` on a thread of its own, awaited.
    public func prepare() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { [self] in
                do { try open(); continuation.resume() } catch { continuation.resume(throwing: error) }
            }
            thread.name = "portal-open"
            thread.start()
        }
    }

    public func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        let begin = state.withLock { s -> Bool in
            guard !s.running, s.failure == nil else { return false }
            s.running = true
            s.deliver = deliver
            return true
        }
        guard begin else { return }
        let thread = Thread { [self] in
            watch()
            watchDone.signal()
        }
        thread.name = "capture-watch"
        thread.start()
    }

    public func stop() {
        let wasRunning = state.withLock { s -> Bool in
            defer { s.running = false }
            return s.running
        }
        if wasRunning { watchDone.wait() }
        detachCapture()?.stop()
        let session = state.withLock { s in
            defer { s.session = nil }; return s.session
        }
        session?.close()
    }

    deinit { stop() }

    // MARK: The watch thread

    private func watch() {
        var watch = CaptureWatch(now: .now)
        watch.persistent = persistent
        if var error = connect() {
            // Unattended: a session that closed before the stream started is asked for again.
            if persistent, let again = restart(renewSession: true) { error = again } else if persistent { error = "" }
            if !error.isEmpty {
                fail(error)
                return
            }
        }
        while state.withLock({ $0.running && $0.failure == nil }) {
            usleep(100_000)
            let failures = state.withLock { s in
                defer { s.pendingStreamFailures.removeAll() }; return s.pendingStreamFailures
            }
            for failure in failures { watch.streamFailed(failure) }
            let closed = state.withLock { s in
                defer { s.pendingSessionClosed.removeAll() }; return s.pendingSessionClosed
            }
            for why in closed where !watch.sessionClosed(why) {
                fail(PortalError.sessionClosed(why).description)
                return
            }
            for action in watch.tick(now: .now, totalFrames: realFrames) {
                switch action {
                case .sayNoFirstFrame:
                    notice(
                        "No picture from the screen yet: a still screen sends nothing through the portal until something on it changes"
                    )
                case .repeatLastFrame:
                    repeatLast()
                case .restart(let reason, let renew):
                    restarts.add(1, ordering: .relaxed)
                    notice("The capture stopped (\(reason)); restarting it on the same screen")
                    // The old stream stops first, so the frames it gave before it stopped are counted
                    // as its own, not as the new stream's.
                    detachCapture()?.stop()
                    watch.restarted(now: .now, totalFrames: realFrames)
                    if let error = restart(renewSession: renew) {
                        guard persistent else { fail(error); return }
                        // Unattended: the desktop may be on its way back; try again, further apart.
                        notice("The capture could not be restarted yet (\(error)); trying again")
                        watch.streamFailed(error)
                    }
                case .giveUp(let reason):
                    fail("the capture could not be restarted: \(reason)")
                    return
                }
            }
        }
        detachCapture()?.stop()
    }

    /// Takes the current capture out of the state, keeping its frame count.
    private func detachCapture() -> PipeWireCapture? {
        state.withLock { s in
            defer { s.capture = nil }
            if let capture = s.capture {
                s.framesBefore += capture.counters.frames.load(ordering: .relaxed)
                s.corruptedBefore += capture.counters.corrupted.load(ordering: .relaxed)
            }
            return s.capture
        }
    }

    /// Connects a new PipeWire stream to the target; nil on success, else why not.
    private func connect() -> String? {
        let configuration: PipeWireCapture.Configuration
        switch target {
        case .node(let node):
            configuration = .init(nodeID: node, remoteFD: nil)
        case .portal(let options):
            guard let session = state.withLock({ $0.session }), !session.isClosed else {
                return "the portal session is closed"
            }
            guard let fd = session.duplicateRemoteFD() else { return "the portal's PipeWire remote is gone" }
            var portalConfiguration = PipeWireCapture.Configuration(nodeID: session.stream.nodeID, remoteFD: fd)
            // With cursor metadata the cursor is ours to draw; embedded or hidden, the portal did it.
            portalConfiguration.drawCursor = options.cursor && session.cursorMode == .metadata
            configuration = portalConfiguration
        }
        do {
            let capture = try PipeWireCapture(
                configuration: configuration, logger: logger,
                deliver: { [weak self] frame in
                    self?.handOn(frame)
                },
                events: { [weak self] event in
                    self?.streamEvent(event)
                })
            state.withLock { $0.capture = capture }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// A new stream on the same node; if that cannot connect, a new portal session from the restore
    /// token (unattended: never a picker), then a stream on it.
    private func restart(renewSession: Bool) -> String? {
        detachCapture()?.stop()
        if !renewSession, connect() == nil { return nil }
        guard case .portal(var options) = target, let loop else { return "the PipeWire node cannot be reached" }
        if !persistent, state.withLock({ $0.session?.isClosed ?? true }) { return "the portal session is closed" }
        options.unattended = true
        logger.notice("capture: asking the portal for the same screen again (restore token, no picker)")
        let previous = state.withLock { s in
            defer { s.session = nil }; return s.session
        }
        previous?.close()
        do {
            let session = try ScreenCastSession.open(loop: loop, options: options, logger: logger) { [weak self] why in
                self?.sessionClosed(why)
            }
            state.withLock { $0.session = session }
        } catch {
            return "a new portal session could not be opened: \(error)"
        }
        return connect()
    }

    private func handOn(_ frame: VideoFrame) {
        let deliver = state.withLock { s -> (@Sendable (VideoFrame) -> Void)? in
            s.lastFrame = frame
            return s.running ? s.deliver : nil
        }
        guard let deliver else { return }
        delivered.add(1, ordering: .relaxed)
        deliver(frame)
    }

    private func repeatLast() {
        let (frame, deliver) = state.withLock { s in (s.lastFrame, s.running ? s.deliver : nil) }
        guard var frame, let deliver else { return }
        frame.captureMicros = Clocks.monotonicMicros()
        frame.sequence = frame.sequence &+ 1
        repeated.add(1, ordering: .relaxed)
        delivered.add(1, ordering: .relaxed)
        deliver(frame)
    }

    private func streamEvent(_ event: PipeWireCapture.Event) {
        switch event {
        case .negotiated(let description):
            logger.info("capture: negotiated \(description)")
            state.withLock { $0.negotiated = description }
        case .streaming:
            break
        case .failed(let why):
            logger.warning("capture: \(why)")
            state.withLock { $0.pendingStreamFailures.append(why) }
        case .note(let text):
            notice(text)
        }
    }

    /// The session ended from outside (on the GLib loop thread). Attended: the capture ends with
    /// the reason. Unattended: the watch thread asks the portal for the same screen again.
    private func sessionClosed(_ why: String) {
        guard persistent else {
            fail(PortalError.sessionClosed(why).description)
            return
        }
        notice("The portal session was closed (\(why)); asking for the same screen again (restore token, no picker)")
        state.withLock { $0.pendingSessionClosed.append(why) }
    }

    private func fail(_ why: String) {
        logger.error("capture: \(why)")
        state.withLock { s in if s.failure == nil { s.failure = why } }
    }

    private func notice(_ text: String) {
        logger.notice("capture: \(text)")
        state.withLock { $0.notices.append(text) }
    }
}
