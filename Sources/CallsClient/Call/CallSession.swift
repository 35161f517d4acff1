import Foundation
import GLibLoop
import SDPWire
import ScreenCapture
import ScreenWatchdog
import ShareCore
import VideoSend
import CallMedia
import RoomProtocol
import Signalling

/// A room call (docs/room-protocol.md): joins the room through `sharectl serve`'s WebSocket and
/// keeps one `PeerConnection` per other participant (a mesh). Each connection carries audio and a
/// camera both ways; a screen we share goes out on a sendonly video section of its own added by
/// renegotiation and announced with `share`; screens others share arrive the same way. Our camera
/// (one source for every connection) is capped at 500 kbit/s and 360 lines while we share a
/// screen and given its defaults back when the share stops (`CappedCamera`), with no
/// renegotiation. Once a second it sends the `media` report (what it decodes of whom) and judges,
/// through `ReconnectWatch`, whether to say "Reconnecting…".
///
/// Signalling that drops is reconnected with the resume key, so a short cut or a server restart
/// (with its state file) keeps everyone's id and every media connection: nothing is offered again
/// and the share is not announced again.
///
/// An actor for control state: every signalling message, share change and tick runs as one job
/// of one queue, in order, so an exchange with a peer is never interleaved with another. Media
/// never crosses it (see `PeerConnection`).
public actor CallSession {
    public enum CameraSource: String, Sendable, CaseIterable { case none, synthetic }
    /// What a participant sends as audio: nothing, the synthetic tone, or a microphone through
    /// PipeWire (the default source, or the node named).
    public enum AudioSource: Sendable, Hashable {
        case none, synthetic
        /// Digital silence, unmuted (drills and tests: what "No sound from NAME" is about).
        case silence
        case microphone(node: String?)

        /// `none`, `synthetic`, `silence`, `mic` or `mic:NODE`.
        public init?(argument: String) {
            switch argument {
            case "none": self = .none
            case "synthetic": self = .synthetic
            case "silence": self = .silence
            case "mic", "microphone": self = .microphone(node: nil)
            default:
                guard argument.hasPrefix("mic:"), argument.count > 4 else { return nil }
                self = .microphone(node: String(argument.dropFirst(4)))
            }
        }

        public var argument: String {
            switch self {
            case .none: "none"
            case .synthetic: "synthetic"
            case .silence: "silence"
            case .microphone(let node): node.map { "mic:\($0)" } ?? "mic"
            }
        }
    }

    public struct Options: Sendable {
        /// The invite link: `http[s]://HOST:PORT/r/ROOM?t=TOKEN`.
        public var invite: String
        public var name: String
        /// Share the synthetic screen from the start.
        public var shareScreen = false
        public var screenWidth = 1280
        public var screenHeight = 720
        public var framesPerSecond = 30
        public var screenBitrate = 2_000_000
        /// The screen's send policy on every connection (`--policy`; live: `setScreenPolicy`).
        public var policy = ScreenSendPolicy.balanced
        /// The screen to share (a portal or PipeWire capture); nil: the synthetic screen of
        /// `screenWidth`×`screenHeight`. One capture feeds every connection.
        public var screenSource: (any VideoFrameSource)?
        /// `synthetic`: the synthetic pattern on the camera section (640×360 at 15 fps).
        public var camera = CameraSource.none
        /// A camera source (the camera director's feed) sent on the camera section instead of the
        /// synthetic pattern, one source for every connection.
        public var cameraFeed: (any VideoFrameSource)?
        public var audio = AudioSource.none
        /// The Opus rate of what we send, bit/s (`--audio-bitrate`).
        public var audioBitrate = AudioSendThread.defaultBitrate
        public var codec: VideoCodec?
        /// The screen from three shared layer encoders (full, 1/2, 1/4 of the size), each
        /// connection sent the layer its estimate carries (the default): the sender's cost grows
        /// with the layers, not the people. False (`share --room --no-simulcast`): one encoder per
        /// connection.
        public var sharedLayers = true
        /// Negotiate transport-wide congestion feedback (`transport-cc`). False (`watch
        /// --no-transport-cc`): neither offered nor accepted, so whoever sends to us steers by
        /// receiver reports, NACKs and loss, as with a receiver that gives no such feedback.
        public var transportFeedback = true
        public var loopbackOnly = false
        /// How long `start()` waits for the room's welcome once its socket is open.
        public var welcomeTimeout: Duration = .seconds(10)

        public init(invite: String, name: String) {
            self.invite = invite
            self.name = name
        }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// What the one job queue carries.
    enum Job: Sendable {
        case socket(RoomSocket.Event, generation: Int)
        case share(Bool)
        case tick
        case reconnect
        case opened(RoomSocket)
        /// A watchdog step that renegotiates (a rebuild, a share again): in order with signalling.
        case watchdog(CallWatchdogCommand)
    }

    /// One other participant.
    final class Participant {
        let id: String
        var name: String
        let connection: PeerConnection
        let audio: Transceiver
        let camera: Transceiver
        var screen: Transceiver?
        /// They share a screen, on this mid (if they said).
        var sharing = false
        var sharingMid: String?
        var needsOffer = false
        /// Our camera on their connection, capped while we share.
        var cameraSent: CappedCamera?
        var screenView = ViewTracker()
        var cameraView = ViewTracker()
        var theirReport: RoomMessage.Media?
        /// When our screen section to them started sending (the watchdog's grace period).
        var screenSince: ContinuousClock.Instant?
        /// Shared layer encoders: the next screen section to them starts on an encoder of its own
        /// (the watchdog rebuilt it for them).
        var ownEncoderNext = false
        /// Their screen's decoder is wedged by a fault.
        var wedge: RoomCallRules.Wedge?
        /// Our screen's frames and bytes sent to them at the last tick (the rates of the status line).
        var screenSentBefore: (mid: String?, frames: Int, bytes: Int)?
        /// The same for our camera.
        var cameraSentBefore: (mid: String?, frames: Int, bytes: Int)?
        /// Since when the connection has been failed (ICE lost for good), and the DTLS fingerprint
        /// of their side of it: an offer with another fingerprint comes from a new connection.
        var failedSince: ContinuousClock.Instant?
        var remoteFingerprints: Set<String> = []
        /// Connections made for them since one last connected (each waits twice as long).
        var renewals = 0

        init(id: String, name: String, connection: PeerConnection, audio: Transceiver, camera: Transceiver) {
            self.id = id
            self.name = name
            self.connection = connection
            self.audio = audio
            self.camera = camera
        }
    }

    let options: Options
    let logger: Logger
    let loop: GLibLoop
    let socketURL: String
    let cameraFanOut: FrameFanOut<any VideoFrameSource>?
    let watch = ReconnectWatch()
    var jobs: AsyncStream<Job>.Continuation?
    /// Work that runs beside the job queue (the socket's reader, reconnect attempts), each a child
    /// of the driver's task group.
    var children: AsyncStream<@Sendable () async -> Void>.Continuation?
    /// Runs the job queue, the once-a-second tick and the children as one task group; `stop()`
    /// waits for all of it to end.
    var driver: Task<Void, Never>?
    var socket: RoomSocket?
    var socketGeneration = 0
    var signallingUp = false
    var reconnecting = false
    /// Since when signalling has been down, and how soon to try again (`SignallingRetry`).
    var signallingDownSince: ContinuousClock.Instant?
    var retry = SignallingRetry()
    var stopping = false
    /// Glare, renewal and which offers are needed, decided as values.
    var rules = RoomCallRules()
    var myID: String? {
        get { rules.myID }
        set { rules.myID = newValue }
    }
    var resumeKey: String?
    var participants: [String: Participant] = [:]
    var order: [String] = []
    var departed: [String: String] = [:]
    var outbox: [RoomMessage] = []
    var sharing = false
    /// The screen's send policy now (`options.policy` until changed live).
    var screenPolicy = ScreenSendPolicy.balanced
    var shareAnnounced = false
    var sharesSent = 0
    var welcomes = 0
    var resumes = 0
    var startedAt = ContinuousClock.now
    var lastTick: ContinuousClock.Instant?
    var snapshot = CallStatistics()
    var errors: [String] = []
    /// Opens at the room's first answer: its welcome, or an error before it.
    let answered = Latch()
    /// The one capture our screen comes from while sharing, a branch per connection.
    var fanout: FrameFanOut<SupervisedSource>?
    /// `sharedLayers`: the screen's layer encoders, one set per codec a connection negotiated,
    /// fed from one branch of the capture while sharing.
    var sharedEncoders: [VideoCodec: SharedLayerEncoders] = [:]
    var watchdog: ScreenWatchdog<ContinuousClock>?
    var watchdogLink: CallWatchdogLink?
    var watchdogTask: Task<Void, Never>?
    /// Decides which screens we report as stalled (DESIGN.md "Receiver-driven ladder").
    var stallReporter = StallReporter()
    /// Who hears whom, and the notices that say so.
    var audioPaths = AudioPathRules()
    /// Sender faults injected and not yet repaired.
    var senderFaults: [String] = []
    /// Connections made again after one failed (ours or theirs).
    var connectionsRenewed = 0

    /// `loop` is the process's GLib loop; the caller owns it and stops it after `stop()`.
    public init(options: Options, loop: GLibLoop, logger: Logger) throws(Failure) {
        self.options = options
        screenPolicy = options.policy
        self.loop = loop
        self.logger = logger
        socketURL = try Self.socketURL(invite: options.invite)
        cameraFanOut = options.cameraFeed.map { FrameFanOut($0) }
    }

    /// `http[s]://HOST:PORT/r/ROOM?t=TOKEN` → `ws[s]://HOST:PORT/ws/ROOM?t=TOKEN`.
    public static func socketURL(invite: String) throws(Failure) -> String {
        guard var parts = URLComponents(string: invite), let scheme = parts.scheme?.lowercased(),
            ["http", "https", "ws", "wss"].contains(scheme), parts.host != nil
        else {
            throw Failure(description: "'\(redactedURL(invite))' is not a room link (http://HOST:PORT/r/ROOM?t=TOKEN)")
        }
        let segments = parts.path.split(separator: "/")
        guard segments.count == 2, segments[0] == "r" || segments[0] == "ws", !segments[1].isEmpty else {
            throw Failure(description: "'\(redactedURL(invite))' is not a room link: its path is not /r/ROOM")
        }
        guard parts.queryItems?.contains(where: { $0.name == "t" && !($0.value ?? "").isEmpty }) == true else {
            throw Failure(description: "'\(redactedURL(invite))' has no invite token (?t=…)")
        }
        parts.scheme = scheme == "https" || scheme == "wss" ? "wss" : "ws"
        parts.path = "/ws/\(segments[1])"
        guard let url = parts.string else {
            throw Failure(description: "'\(redactedURL(invite))' cannot be turned into a WebSocket address")
        }
        return url
    }

    // MARK: Running

    /// Connects the signalling and joins; returns once welcomed. Throws a readable reason when the
    /// room cannot be reached or refuses us.
    public func start() async throws {
        startedAt = .now
        let (jobStream, jobs) = AsyncStream.makeStream(of: Job.self)
        let (childStream, children) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.jobs = jobs
        self.children = children
        let held = Held(self)
        driver = Task { await Self.drive(held, jobs: jobStream, children: childStream) }
        if options.shareScreen {
            sharing = true
            startScreen()
        }
        try await openSocket()
        _ = await answered.wait(upTo: options.welcomeTimeout)
        if myID == nil, let error = errors.first { throw Failure(description: "the room refused us: \(error)") }
        guard myID != nil else {
            throw Failure(
                description: "the room did not welcome us within \(options.welcomeTimeout.components.seconds) s")
        }
    }

    /// The session, held weakly by its own driver: a session let go without `stop()` ends it.
    private final class Held: Sendable {
        weak let session: CallSession?
        init(_ session: CallSession) { self.session = session }
    }

    /// The job queue, the tick and the children, as one group.
    private static func drive(
        _ held: Held, jobs: AsyncStream<Job>, children: AsyncStream<@Sendable () async -> Void>
    ) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await job in jobs {
                    guard let session = held.session else { return }
                    await session.run(job)
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard let session = held.session else { return }
                    await session.enqueue(.tick)
                }
            }
            for await child in children { group.addTask(operation: child) }
            group.cancelAll()
        }
    }

    /// Runs `work` as a child of the driver (dropped once stopping).
    func spawn(_ work: @escaping @Sendable () async -> Void) {
        children?.yield(work)
    }

    /// Starts or stops sharing the synthetic screen.
    public func setSharing(_ on: Bool) { enqueue(.share(on)) }

    /// Leaves the room and closes every connection.
    public func stop() async {
        guard !stopping else { return }
        stopping = true
        stopScreen()
        if signallingUp, let socket {
            // The server closes the socket when it has our leave.
            _ = await socket.sendLast(RoomMessage.leave.text, waitingForCloseUpTo: .seconds(1))
        } else {
            socket?.close()
        }
        jobs?.finish()
        children?.finish()
        driver?.cancel()
        await driver?.value
        for participant in participants.values {
            await participant.connection.stopSending()
            await participant.connection.close()
        }
        participants = [:]
    }

    func enqueue(_ job: Job) { jobs?.yield(job) }

    /// We send a camera: the director's feed or the synthetic pattern.
    var sendsCamera: Bool { options.cameraFeed != nil || options.camera == .synthetic }

    func run(_ job: Job) async {
        guard !stopping else { return }
        switch job {
        case .socket(let event, let generation):
            guard generation == socketGeneration else { return }
            switch event {
            case .text(let text): await received(text)
            case .closed(let reason): await signallingLost(reason)
            }
        case .share(let on): await changeSharing(on)
        case .tick: await tick()
        case .reconnect: reconnect()
        case .opened(let socket): install(socket)
        case .watchdog(let command): await renegotiatingStep(command)
        }
    }

    // MARK: Reading

    /// The figures of the last second (refreshed once a second).
    public func statistics() -> CallStatistics { snapshot }

    /// The last decoded picture of each participant's screen and camera, for snapshots.
    public func pictures() async -> [(name: String, what: String, frame: VideoFrame)] {
        var result: [(String, String, VideoFrame)] = []
        for id in order {
            guard let participant = participants[id] else { continue }
            if let frame = await participant.connection.latestPicture(on: participant.camera) {
                result.append((participant.name, "camera", frame))
            }
            let remote = participant.sharing ? await remoteScreen(of: participant) : nil
            if let screen = remote, let frame = await participant.connection.latestPicture(on: screen) {
                result.append((participant.name, "screen", frame))
            }
        }
        return result
    }
}

/// The watchdog reads the call and carries its steps out through `CallWatchdogLink`.
extension CallSession: CallWatchdogTarget {}
