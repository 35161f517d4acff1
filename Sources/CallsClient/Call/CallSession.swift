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
        case microphone(node: String?)

        /// `none`, `synthetic`, `mic` or `mic:NODE`.
        public init?(argument: String) {
            switch argument {
            case "none": self = .none
            case "synthetic": self = .synthetic
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
        /// `synthetic`: the synthetic pattern on the camera section (640×360 at 15 fps).
        public var camera = CameraSource.none
        /// A camera source (the camera director's feed) sent on the camera section instead of the
        /// synthetic pattern, one source for every connection.
        public var cameraFeed: (any VideoFrameSource)?
        public var audio = AudioSource.none
        public var codec: VideoCodec?
        public var loopbackOnly = false

        public init(invite: String, name: String) {
            self.invite = invite
            self.name = name
        }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// What the one job queue carries.
    private enum Job: Sendable {
        case socket(RoomSocket.Event, generation: Int)
        case share(Bool)
        case tick
        case reconnect
        case opened(RoomSocket)
        /// A watchdog step that renegotiates (a rebuild, a share again): in order with signalling.
        case watchdog(CallWatchdogCommand)
    }

    /// A receiver decoder fault (drills and tests): `sticky` follows the person's screen across
    /// rebuilds; only a share again (the screen stopped and shared anew) ends it.
    private struct Wedge {
        var sticky: Bool
        /// The mid of the screen section whose decoder is wedged (nil: none wedged yet).
        var mid: String?
    }

    /// One other participant.
    private final class Participant {
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
        /// Their screen's decoder is wedged by a fault.
        var wedge: Wedge?
        /// Our screen's frames and bytes sent to them at the last tick (the rates of the status line).
        var screenSentBefore: (mid: String?, frames: Int, bytes: Int)?
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

    private let options: Options
    private let logger: Logger
    private let loop: GLibLoop
    private let socketURL: String
    private let cameraFanOut: FrameFanOut?
    private let watch = ReconnectWatch()
    private var jobs: AsyncStream<Job>.Continuation?
    private var worker: Task<Void, Never>?
    private var ticker: Task<Void, Never>?
    private var reader: Task<Void, Never>?
    private var socket: RoomSocket?
    private var socketGeneration = 0
    private var signallingUp = false
    private var reconnecting = false
    private var stopping = false
    /// Glare, renewal and which offers are needed, decided as values.
    private var rules = RoomCallRules()
    private var myID: String? {
        get { rules.myID }
        set { rules.myID = newValue }
    }
    private var resumeKey: String?
    private var participants: [String: Participant] = [:]
    private var order: [String] = []
    private var departed: [String: String] = [:]
    private var outbox: [RoomMessage] = []
    private var sharing = false
    private var shareAnnounced = false
    private var sharesSent = 0
    private var welcomes = 0
    private var resumes = 0
    private var startedAt = ContinuousClock.now
    private var lastTick: ContinuousClock.Instant?
    private var snapshot = CallStatistics()
    private var errors: [String] = []
    /// The one capture our screen comes from while sharing, a branch per connection.
    private var fanout: ScreenFanout?
    private var watchdog: ScreenWatchdog<ContinuousClock>?
    private var watchdogLink: CallWatchdogLink?
    private var watchdogTask: Task<Void, Never>?
    /// Decides which screens we report as stalled (DESIGN.md "Receiver-driven ladder").
    private var stallReporter = StallReporter()
    /// Sender faults injected and not yet repaired.
    private var senderFaults: [String] = []
    /// Connections made again after one failed (ours or theirs).
    private var connectionsRenewed = 0

    /// `loop` is the process's GLib loop; the caller owns it and stops it after `stop()`.
    public init(options: Options, loop: GLibLoop, logger: Logger) throws(Failure) {
        self.options = options
        self.loop = loop
        self.logger = logger
        socketURL = try Self.socketURL(invite: options.invite)
        cameraFanOut = options.cameraFeed.map(FrameFanOut.init)
    }

    /// `http[s]://HOST:PORT/r/ROOM?t=TOKEN` → `ws[s]://HOST:PORT/ws/ROOM?t=TOKEN`.
    public static func socketURL(invite: String) throws(Failure) -> String {
        guard var parts = URLComponents(string: invite), let scheme = parts.scheme?.lowercased(),
              ["http", "https", "ws", "wss"].contains(scheme), parts.host != nil else {
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
        guard let url = parts.string else { throw Failure(description: "'\(redactedURL(invite))' cannot be turned into a WebSocket address") }
        return url
    }

    // MARK: Running

    /// Connects the signalling and joins; returns once welcomed. Throws a readable reason when the
    /// room cannot be reached or refuses us.
    public func start() async throws {
        startedAt = .now
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
        jobs = continuation
        worker = Task { [weak self] in
            for await job in stream {
                guard let self else { return }
                await self.run(job)
            }
        }
        ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                await self.enqueue(.tick)
            }
        }
        if options.shareScreen {
            sharing = true
            startScreen()
        }
        try await openSocket()
        let deadline = ContinuousClock.now + .seconds(10)
        while myID == nil, ContinuousClock.now < deadline {
            if let error = errors.first { throw Failure(description: "the room refused us: \(error)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard myID != nil else { throw Failure(description: "the room did not welcome us within 10 s") }
    }

    /// Starts or stops sharing the synthetic screen.
    public func setSharing(_ on: Bool) { enqueue(.share(on)) }

    /// Leaves the room and closes every connection.
    public func stop() async {
        guard !stopping else { return }
        stopping = true
        ticker?.cancel()
        stopScreen()
        if signallingUp { socket?.send(RoomMessage.leave.text) }
        try? await Task.sleep(for: .milliseconds(100))
        socket?.close()
        reader?.cancel()
        jobs?.finish()
        worker?.cancel()
        for participant in participants.values {
            await participant.connection.stopSending()
            await participant.connection.close()
        }
        participants = [:]
    }

    private func enqueue(_ job: Job) { jobs?.yield(job) }

    /// We send a camera: the director's feed or the synthetic pattern.
    private var sendsCamera: Bool { options.cameraFeed != nil || options.camera == .synthetic }

    private func run(_ job: Job) async {
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

    // MARK: Signalling socket

    /// Connects a socket; the job queue installs it (so no job waits on a connect).
    private func openSocket() async throws {
        let socket = try await RoomSocket.connect(loop: loop, url: socketURL, logger: logger)
        enqueue(.opened(socket))
    }

    private func install(_ socket: RoomSocket) {
        guard !stopping, !signallingUp else {
            socket.close()
            return
        }
        socketGeneration += 1
        let generation = socketGeneration
        self.socket = socket
        signallingUp = true
        socket.send(RoomMessage.join(name: options.name, resume: resumeKey).text)
        reader = Task { [weak self] in
            for await event in socket.events {
                guard let self else { return }
                await self.enqueue(.socket(event, generation: generation))
            }
        }
    }

    private func send(_ message: RoomMessage) {
        if signallingUp, myID != nil, let socket {
            socket.send(message.text)
        } else if case .media = message {
            // Reports are not worth keeping for later.
        } else {
            outbox.append(message)
        }
    }

    private func signallingLost(_ reason: String) async {
        guard signallingUp else { return }
        signallingUp = false
        socket = nil
        logger.notice("signalling lost (\(reason)); reconnecting with the resume key")
        await watch.signalling(up: false, now: .now)
        scheduleReconnect(after: .milliseconds(250))
    }

    private func scheduleReconnect(after delay: Duration) {
        guard !reconnecting, !stopping else { return }
        reconnecting = true
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.enqueue(.reconnect)
        }
    }

    /// One attempt, off the job queue; a failed one tries again in half a second.
    private func reconnect() {
        reconnecting = false
        guard !signallingUp, !stopping else { return }
        reconnecting = true
        Task { [weak self] in
            guard let self else { return }
            do {
                try await self.openSocket()
                await self.attemptEnded(failure: nil)
            } catch {
                await self.attemptEnded(failure: "\(error)")
            }
        }
    }

    private func attemptEnded(failure: String?) {
        reconnecting = false
        guard let failure else { return }
        logger.info("signalling: \(failure)")
        scheduleReconnect(after: .milliseconds(500))
    }

    // MARK: Messages

    private func received(_ text: String) async {
        let message: RoomMessage
        do {
            message = try RoomMessage.parse(text)
        } catch {
            logger.warning("\(error)")
            return
        }
        switch message {
        case .welcome(let id, let resume, let peers): await welcome(id: id, resume: resume, peers: peers)
        case .joined(let peer):
            if participants[peer.id] == nil { _ = await participant(peer.id, name: peer.name) }
            participants[peer.id]?.sharing = peer.sharing
        case .left(let id): await remove(id)
        case .signal(let signal): await handle(signal)
        case .share(let from, let on, let mid):
            guard let from, let participant = participants[from] else { return }
            participant.sharing = on
            participant.sharingMid = on ? mid : nil
            if !on {
                participant.screenView.reset()
                // Their screen is gone: a wedged decoder (sticky or not) goes with it.
                if participant.wedge != nil {
                    participant.wedge = nil
                    for transceiver in await participant.connection.allTransceivers where transceiver.kind == .video {
                        await participant.connection.setDecoderWedged(false, on: transceiver)
                    }
                    logger.notice("\(participant.name) stopped sharing: the decoder fault on their screen is over")
                }
            }
            logger.notice("\(participant.name) \(on ? "shares a screen" : "stopped sharing")")
        case .media(let media):
            guard let from = media.from, let participant = participants[from] else { return }
            participant.theirReport = media
        case .error(let code, let text):
            logger.warning("room: \(code): \(text)")
            if myID == nil { errors.append("\(code): \(text)") }
        case .join, .leave: break
        }
    }

    private func welcome(id: String, resume: String, peers: [RoomMessage.Peer]) async {
        welcomes += 1
        await watch.signalling(up: true, now: .now)
        let resumed = myID == id
        if myID != nil, !resumed {
            // Our place was lost (gone past the grace period): start again as a newcomer.
            logger.notice("rejoined as a new participant (\(id)); connecting to everyone again")
            for key in Array(participants.keys) { await remove(key) }
            shareAnnounced = false
        }
        if resumed { resumes += 1 }
        myID = id
        resumeKey = resume
        let queued = outbox
        outbox = []
        for message in queued { send(message) }
        for peer in peers {
            let known = participants[peer.id] != nil
            guard let participant = await participant(peer.id, name: peer.name) else { continue }
            participant.sharing = peer.sharing
            if peer.sharing, let mid = peer.mid { participant.sharingMid = mid }
            // The newcomer offers to everyone its welcome lists.
            if !known { await negotiate(participant) }
        }
        if sharing, !shareAnnounced, participants.isEmpty { announceShare(mid: nil) }
    }

    private func participant(_ id: String, name: String) async -> Participant? {
        if let existing = participants[id] {
            existing.name = name
            return existing
        }
        var configuration = PeerConnection.Configuration(loopbackOnly: options.loopbackOnly)
        if let codec = options.codec { configuration.capabilities.videoCodecs = [codec == .h264 ? .h264 : .vp8] }
        configuration.streamID = "sharectl-\(options.name.filter { $0.isLetter || $0.isNumber })"
        let connection: PeerConnection
        let audio: Transceiver, camera: Transceiver
        do {
            connection = try PeerConnection(loop: loop, configuration: configuration, logger: logger.child(id))
            audio = try await connection.addTransceiver(kind: .audio, direction: options.audio == .none ? .recvonly : .sendrecv)
            camera = try await connection.addTransceiver(kind: .video, direction: sendsCamera ? .sendrecv : .recvonly,
                                                         trackID: "camera")
        } catch {
            logger.error("no connection to \(name): \(error)")
            return nil
        }
        let participant = Participant(id: id, name: name, connection: connection, audio: audio, camera: camera)
        participants[id] = participant
        order.append(id)
        if sharing { participant.screen = try? await connection.addTransceiver(kind: .video, direction: .sendonly, trackID: "screen") }
        return participant
    }

    private func remove(_ id: String) async {
        guard let participant = participants.removeValue(forKey: id) else { return }
        order.removeAll { $0 == id }
        departed[id] = participant.name
        logger.notice("\(participant.name) left")
        await participant.connection.stopSending()
        await participant.connection.close()
    }

    /// A failed connection is made again from nothing (new ICE agent, new DTLS), as for someone
    /// who just joined: what they were (name, sharing, a decoder fault in force) carries over.
    /// With `offer`, ours is offered at once; else an offer of theirs is about to be answered.
    private func renew(_ old: Participant, reason: String, offer: Bool) async -> Participant? {
        participants.removeValue(forKey: old.id)
        order.removeAll { $0 == old.id }
        connectionsRenewed += 1
        logger.notice(reason)
        await old.connection.stopSending()
        await old.connection.close()
        guard let fresh = await participant(old.id, name: old.name) else { return nil }
        fresh.sharing = old.sharing
        fresh.sharingMid = nil  // its screen's mid on the new connection is not the old one
        fresh.theirReport = old.theirReport
        fresh.wedge = old.wedge
        fresh.renewals = old.renewals + 1
        if offer { await negotiate(fresh) }
        return fresh
    }

    /// Renews connections that failed, when `RoomCallRules.renewalDue` says their wait is up.
    private func renewFailedConnections(now: ContinuousClock.Instant) async {
        for id in order {
            guard let participant = participants[id], let since = participant.failedSince,
                  rules.renewalDue(with: id, failedSince: since, renewals: participant.renewals,
                                   signallingUp: signallingUp, now: now)
            else { continue }
            let why: String
            if case .failed(let reason) = participant.connection.state { why = reason } else { why = "failed" }
            _ = await renew(participant, reason: "the connection to \(participant.name) failed (\(why)); connecting again", offer: true)
        }
    }

    // MARK: Offer and answer

    /// Sends an offer to `participant`, or remembers to once the exchange under way ends.
    private func negotiate(_ participant: Participant) async {
        let pc = participant.connection
        guard await !pc.hasPendingLocalOffer else {
            participant.needsOffer = true
            return
        }
        participant.needsOffer = false
        do {
            let offer = try await pc.createOffer()
            send(.signal(.init(peer: participant.id, kind: .offer, sdp: offer)))
            if sharing, !shareAnnounced, let mid = participant.screen?.mid { announceShare(mid: mid) }
        } catch {
            logger.warning("could not offer to \(participant.name): \(error)")
        }
    }

    private func handle(_ signal: RoomMessage.Signal) async {
        var known = participants[signal.peer]
        if let old = known, signal.kind == .offer,
           RoomCallRules.comesFromNewConnection(offered: RoomCallRules.fingerprints(in: signal.sdp ?? ""),
                                                known: old.remoteFingerprints) {
            // They made a new connection (theirs failed): ours goes too, and the offer is answered
            // on a new one.
            known = await renew(old, reason: "\(old.name) connected again from a new connection", offer: false)
        }
        let made = known == nil ? await participant(signal.peer, name: signal.peer) : nil
        guard let participant = known ?? made else { return }
        let pc = participant.connection
        switch signal.kind {
        case .offer:
            if await pc.hasPendingLocalOffer {
                guard rules.glare(with: participant.id) == .rollBackAndAnswer else {
                    logger.info("glare with \(participant.name): keeping our offer")
                    return
                }
                await pc.rollback()
                participant.needsOffer = true
            }
            do {
                try await pc.setRemoteDescription(signal.sdp ?? "", type: .offer)
                participant.remoteFingerprints = RoomCallRules.fingerprints(in: signal.sdp ?? "")
                let answer = try await pc.createAnswer()
                send(.signal(.init(peer: participant.id, kind: .answer, sdp: answer)))
                await attachMedia(participant)
                await applyWedge(participant)
            } catch {
                logger.warning("could not answer \(participant.name): \(error)")
                return
            }
        case .answer:
            do {
                try await pc.setRemoteDescription(signal.sdp ?? "", type: .answer)
                participant.remoteFingerprints = RoomCallRules.fingerprints(in: signal.sdp ?? "")
                await attachMedia(participant)
            } catch {
                logger.warning("the answer of \(participant.name) was refused: \(error)")
                return
            }
        case .candidate:
            // Before the description the connection keeps them (bounded) and applies them with it.
            let line = signal.candidate ?? ""
            do {
                if line.isEmpty { try await pc.endOfRemoteCandidates() } else { try await pc.addRemoteCandidate(line) }
            } catch {
                logger.debug("a candidate of \(participant.name) was skipped: \(error)")
            }
            return
        }
        let screenWanted = await needsScreenOffer(participant)
        if participant.needsOffer || screenWanted { await negotiate(participant) }
    }

    /// Our screen section is wanted but not yet offered or not yet in the state we want.
    private func needsScreenOffer(_ participant: Participant) async -> Bool {
        guard let screen = participant.screen else { return false }
        return RoomCallRules.screenNeedsOffer(wanted: screen.direction, negotiated: screen.negotiated?.direction)
    }

    /// Attaches what we send to sections newly negotiated to send: the tone, the camera, the screen.
    private func attachMedia(_ participant: Participant) async {
        let pc = participant.connection
        do {
            if options.audio != .none, participant.audio.negotiated?.direction.sends == true,
               await !pc.isSending(on: participant.audio) {
                if case .microphone(let node) = options.audio {
                    try await pc.attachAudio(MicrophoneSource(node: node, logger: logger), to: participant.audio)
                } else {
                    try await pc.attachAudioTone(to: participant.audio, toneLevelDbfs: -20)
                }
            }
            if sendsCamera, participant.camera.negotiated?.direction.sends == true, await !pc.isSending(on: participant.camera) {
                // The director's camera (30 fps at most), or the synthetic pattern (15 fps, 500 kbit/s, 640 wide).
                let source = cameraFanOut?.branch() ?? SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 15)
                let defaults = cameraFanOut != nil ? CappedCamera.Defaults() : CappedCamera.Defaults(bitrate: 500_000, longSide: 640)
                let camera = CappedCamera(source, connection: pc, transceiver: participant.camera, defaults: defaults,
                                          besideScreen: sharing)
                try await pc.attachVideoSource(camera, to: participant.camera, bitrate: defaults.bitrate,
                                               framesPerSecond: cameraFanOut != nil ? 30 : 15, maxLongSide: defaults.longSide,
                                               content: .camera)
                participant.cameraSent = camera
            }
            if let screen = participant.screen, screen.negotiated?.direction.sends == true, await !pc.isSending(on: screen) {
                let fanout = startScreen()
                try await pc.attachVideoSource(fanout.branch(), to: screen, bitrate: options.screenBitrate,
                                               framesPerSecond: options.framesPerSecond, maxLongSide: 1920)
                participant.screenSince = .now
            }
        } catch {
            logger.warning("could not send to \(participant.name): \(error)")
        }
    }

    // MARK: Sharing

    private func changeSharing(_ on: Bool) async {
        guard on != sharing else { return }
        sharing = on
        logger.notice(on ? "sharing the screen" : "stopping the share")
        if on { startScreen() } else { stopScreen() }
        for id in order {
            guard let participant = participants[id] else { continue }
            participant.cameraSent?.setBesideScreen(on)
            if on {
                if let screen = participant.screen {
                    await participant.connection.setDirection(.sendonly, of: screen)
                } else {
                    participant.screen = try? await participant.connection.addTransceiver(kind: .video, direction: .sendonly,
                                                                                            trackID: "screen")
                }
            } else if let screen = participant.screen {
                await participant.connection.setDirection(.inactive, of: screen)
            }
            await negotiate(participant)
        }
        if on {
            if !shareAnnounced { announceShare(mid: participants.values.lazy.compactMap { $0.screen?.mid }.first) }
        } else {
            shareAnnounced = false
            sharesSent += 1
            send(.share(from: nil, on: false, mid: nil))
        }
    }

    private func announceShare(mid: String?) {
        shareAnnounced = true
        sharesSent += 1
        send(.share(from: nil, on: true, mid: mid))
    }

    // MARK: The screen and its watchdog

    /// The capture (started once for every connection) and the watchdog, while sharing.
    @discardableResult
    private func startScreen() -> ScreenFanout {
        let fanout = self.fanout ?? ScreenFanout(capture: SupervisedSource(SyntheticScreenSource(
            width: options.screenWidth, height: options.screenHeight, framesPerSecond: options.framesPerSecond)))
        self.fanout = fanout
        fanout.start()
        if watchdog == nil {
            let link = CallWatchdogLink(target: self)
            let dog = ScreenWatchdog(probe: link, effector: link, logger: logger, origin: .now)
            watchdogLink = link
            watchdog = dog
            watchdogTask = Task { try? await dog.run() }
        }
        return fanout
    }

    private func stopScreen() {
        watchdogTask?.cancel()
        watchdogTask = nil
        watchdogLink?.detach()
        watchdogLink = nil
        watchdog = nil
        fanout?.stop()
        fanout = nil
        senderFaults = []
    }

    /// For the watchdog, once a second: the capture's count and, per person our screen goes to,
    /// the counters of their screen section and what they last reported of it.
    public func watchdogFigures() async -> CallWatchdogFigures {
        var people: [CallWatchdogFigures.Person] = []
        let now = ContinuousClock.now
        for id in order {
            guard sharing, let participant = participants[id], let screen = participant.screen,
                  screen.negotiated?.direction.sends == true, let since = participant.screenSince,
                  let encoder = screen.media?.encoder else { continue }
            let figures = await participant.connection.statistics()
            let sent = figures.transceivers.first { $0.mid == screen.mid }?.sent
            let congestion = figures.congestion
            let linkLimited = (congestion?.pacedQueueMillis ?? 0) > 250 || (congestion.map { $0.targetBitrate <= 150_000 } ?? false)
            let theirs = participant.theirReport?.screens.first { $0.from == myID }
            people.append(.init(id: id, name: participant.name, framesIn: encoder.counters.framesIn,
                                framesEncoded: sent?.framesEncoded ?? 0, framesSent: sent?.framesSent ?? 0,
                                keyframesSent: sent?.keyframesEncoded ?? 0, linkLimited: linkLimited,
                                sendingFor: now - since, reportsStalled: theirs?.screenStalled,
                                reportsDecoded: theirs?.framesDecoded))
        }
        return CallWatchdogFigures(captureFrames: fanout?.capture.frameCount, people: people)
    }

    /// Carries out one watchdog step. A keyframe or a fresh encoder touches one encoder at once; a
    /// rebuild or a share again renegotiates, so it joins the job queue behind any exchange under way.
    public func watchdogCarryOut(_ command: CallWatchdogCommand) async throws {
        switch command {
        case .restartCapture:
            guard let fanout else { throw Failure(description: "no capture is running") }
            fanout.capture.restart()
            senderFaults.removeAll { $0 == "capture-stall" }
        case .keyframe(let id):
            guard let participant = participants[id], let screen = participant.screen else {
                throw Failure(description: "no screen goes to \(id)")
            }
            await participant.connection.requestKeyframe(on: screen)
        case .freshEncoder(let id, let scale, let seconds):
            guard let encoder = participants[id]?.screen?.media?.encoder else {
                throw Failure(description: "no screen encoder for \(id)")
            }
            encoder.rebuildEncoder(scale: scale, forSeconds: seconds)
            if !anyEncoderStalled { senderFaults.removeAll { $0 == "encoder-stall" } }
        case .rebuild(let id):
            guard sharing, participants[id]?.screen != nil else { throw Failure(description: "no screen goes to \(id)") }
            enqueue(.watchdog(command))
        case .shareAgain:
            guard sharing else { throw Failure(description: "the screen is not shared") }
            enqueue(.watchdog(command))
        }
    }

    /// A keyframe on every screen section we send (typed `keyframe`).
    public func requestScreenKeyframes() async -> String {
        var asked = 0
        for participant in participants.values {
            guard let screen = participant.screen, screen.media?.encoder != nil else { continue }
            await participant.connection.requestKeyframe(on: screen)
            asked += 1
        }
        return asked == 0 ? "no screen encoder is running" : "Keyframe asked for (\(asked) connections)"
    }

    private var anyEncoderStalled: Bool {
        participants.values.contains { $0.screen?.media?.encoder?.isStalled == true }
    }

    /// A rebuild: a new screen section to one person (the old one inactive), so a new encoder
    /// here and a new decoder there. A share again: the same for everyone, said with `share` off
    /// and on, from the same capture.
    private func renegotiatingStep(_ command: CallWatchdogCommand) async {
        guard sharing else { return }
        switch command {
        case .rebuild(let id):
            guard let participant = participants[id] else { return }
            await replaceScreen(of: participant)
            logger.notice("rebuilt the screen for \(participant.name): a new section, so a new encoder here and a new decoder there")
        case .shareAgain:
            // Off first, so every receiver lets go of the old screen before the new sections arrive.
            sharesSent += 1
            send(.share(from: nil, on: false, mid: nil))
            shareAnnounced = false
            for id in order {
                guard let participant = participants[id] else { continue }
                await replaceScreen(of: participant)
            }
            // The first offer announced it with its section's mid, unless no offer could go yet.
            if !shareAnnounced { announceShare(mid: participants.values.lazy.compactMap { $0.screen?.mid }.first) }
            logger.notice("shared the screen again to everyone from the same capture")
        default:
            break
        }
        senderFaults.removeAll { $0 == "encoder-stall" }
    }

    private func replaceScreen(of participant: Participant) async {
        let pc = participant.connection
        if let old = participant.screen { await pc.setDirection(.inactive, of: old) }
        participant.screen = try? await pc.addTransceiver(kind: .video, direction: .sendonly, trackID: "screen")
        participant.screenSince = nil
        await negotiate(participant)
        // The section numbers itself at the offer; say which one it is when the offer had to wait.
    }

    /// Fault injection for drills and tests, off unless asked for. The sharer's: a capture or
    /// encoder stall; the viewer's: a decoder wedge, and clearing it. Returns what was done, in words.
    public func injectFault(_ fault: FaultDrill) async -> String {
        switch fault {
        case .captureStall:
            guard sharing, let fanout else { return "no screen is shared" }
            fanout.capture.injectStall()
            senderFaults.append(fault.word)
            logger.notice("fault injected: the screen capture stops delivering")
            return "Fault: the screen capture stops delivering frames"
        case .encoderStall:
            guard sharing else { return "no screen is shared" }
            var stalled = 0
            for participant in participants.values {
                guard let encoder = participant.screen?.media?.encoder else { continue }
                encoder.injectStall()
                stalled += 1
            }
            guard stalled > 0 else { return "no screen encoder is running yet" }
            senderFaults.append(fault.word)
            return "Fault: the screen's encoders stop producing (\(stalled))"
        case .decoderWedge(let name, let sticky):
            var wedged: [String] = []
            var matched = 0
            for id in order {
                guard let participant = participants[id], Self.matches(participant.name, name) else { continue }
                participant.wedge = Wedge(sticky: sticky, mid: nil)
                await applyWedge(participant)
                if participant.wedge?.mid != nil { wedged.append(participant.name) }
                matched += 1
            }
            logger.notice("fault injected: \(fault.word) of \(name.map { "\($0)'s screen" } ?? "every screen")")
            let whose = name.map { "\($0)'s screen" } ?? "every screen"
            guard matched > 0 else { return name.map { "no one called \($0) is in the call" } ?? "no one else is in the call" }
            return "Fault: the decoder of \(whose) swallows every frame"
                + (sticky ? " (sticky: across rebuilds until shared again)" : " (until it is rebuilt)")
                + (wedged.isEmpty ? "; no such screen decodes yet, it wedges when one does" : "")
        case .clear:
            for participant in participants.values {
                participant.wedge = nil
                for transceiver in await participant.connection.allTransceivers where transceiver.kind == .video {
                    await participant.connection.setDecoderWedged(false, on: transceiver)
                }
            }
            return "Fault: cleared"
        }
    }

    private static func matches(_ name: String, _ wanted: String?) -> Bool {
        guard let wanted else { return true }
        return name.caseInsensitiveCompare(wanted) == .orderedSame
    }

    /// Keeps a decoder fault on the screen it is about: a wedge waiting for a screen wedges the
    /// first that decodes; a screen rebuilt (another section) ends a plain wedge and takes a
    /// sticky one along; the sharer's share ending (a share again included) ends either.
    private func applyWedge(_ participant: Participant) async {
        guard participant.wedge != nil, participant.sharing,
              let screen = await remoteScreen(of: participant), screen.media?.videoReceiver != nil,
              // Read after the wait: their share may have ended meanwhile, and the fault with it.
              var wedge = participant.wedge else { return }
        if let mid = wedge.mid, mid != screen.mid {
            guard wedge.sticky else {
                participant.wedge = nil
                logger.notice("\(participant.name)'s screen was rebuilt: its new decoder is not wedged")
                return
            }
            logger.notice("\(participant.name)'s screen was rebuilt: the sticky wedge takes its new decoder too")
        }
        guard wedge.mid != screen.mid || screen.media?.videoReceiver?.isWedged == false else { return }
        await participant.connection.setDecoderWedged(true, on: screen)
        guard participant.wedge != nil else {
            // Their share ended while this decoder was being wedged: the fault is over.
            await participant.connection.setDecoderWedged(false, on: screen)
            return
        }
        wedge.mid = screen.mid
        participant.wedge = wedge
    }

    // MARK: Once a second

    private func tick() async {
        let now = ContinuousClock.now
        let elapsed = lastTick.map { Double(($0.duration(to: now)).components.attoseconds) / 1e18 + Double($0.duration(to: now).components.seconds) } ?? 1
        lastTick = now
        var stats = CallStatistics()
        stats.t = Self.seconds(startedAt.duration(to: now))
        stats.id = myID
        stats.signalling = signallingUp ? "up" : "down"
        stats.sharing = sharing
        stats.sharesSent = sharesSent
        stats.welcomes = welcomes
        stats.resumes = resumes
        var report = RoomMessage.Media()
        var healthy = true
        var decoded: [String: (mid: String?, frames: Int)] = [:]
        for id in order {
            guard let participant = participants[id] else { continue }
            let figures = await participant.connection.statistics()
            var peer = CallStatistics.Peer(id: id, name: participant.name)
            peer.sharing = participant.sharing
            let state = participant.connection.state
            peer.connection.state = state.description
            peer.connection.pair = figures.transport.selectedPair
            peer.connection.rttMs = figures.transport.rttMs
            if case .failed = state {
                healthy = false
                participant.failedSince = participant.failedSince ?? now
            } else {
                participant.failedSince = nil
                if state == .connected { participant.renewals = 0 }
            }

            // What they send us.
            peer.camera = .init()
            peer.audio = .init()
            if let camera = figures.transceivers.first(where: { $0.mid == participant.camera.mid })?.received {
                participant.cameraView.update(frames: camera.framesDecoded, now: now, elapsed: elapsed)
                peer.camera = Self.view(camera, tracker: participant.cameraView, codec: participant.camera.negotiated?.codec)
                report.cameras.append(.init(from: id, framesDecoded: camera.framesDecoded))
            }
            await applyWedge(participant)
            let remote = participant.sharing ? await remoteScreen(of: participant) : nil
            if let screen = remote, let received = figures.transceivers.first(where: { $0.mid == screen.mid })?.received {
                participant.screenView.update(frames: received.framesDecoded, now: now, elapsed: elapsed)
                peer.screen = Self.view(received, tracker: participant.screenView, codec: screen.negotiated?.codec)
                peer.screen?.mid = screen.mid
                decoded[id] = (screen.mid, received.framesDecoded)
            } else if participant.sharing {
                participant.screenView.update(frames: 0, now: now, elapsed: elapsed)
                peer.screen = .init()
                decoded[id] = (nil, 0)
            }
            if let audio = figures.transceivers.first(where: { $0.mid == participant.audio.mid })?.received {
                let hearing = (audio.audioHearingPeakDbfs ?? AudioLevel.silence) > -70
                peer.audio = .init(samplesDecoded: audio.audioSamplesDecoded, framesConcealed: audio.audioFramesConcealed,
                                   levelDbfs: audio.audioRecentPeakDbfs ?? AudioLevel.silence, hearing: hearing)
                if hearing { report.hearing.append(id) }
            }
            // What we send them.
            if let screen = participant.screen, let sent = figures.transceivers.first(where: { $0.mid == screen.mid })?.sent {
                peer.video = .init(framesSent: sent.framesSent, framesEncoded: sent.framesEncoded, width: sent.width,
                                   height: sent.height, keyframes: sent.keyframesEncoded, codec: sent.encoder)
                peer.video?.mid = screen.mid
                peer.video?.encodersMade = sent.encodersMade
                peer.video?.codecName = screen.negotiated?.codec?.rawValue
                peer.video?.targetKbps = sent.targetBitrate / 1000
                peer.video?.limitedBy = sent.limitedBy
                peer.video?.policy = sent.policy
                // Rates over the last tick; a rebuild (another section) starts them afresh.
                if let before = participant.screenSentBefore, before.mid == screen.mid, elapsed > 0 {
                    peer.video?.fps = Double(max(0, sent.framesSent - before.frames)) / elapsed
                    peer.video?.bitrateKbps = Int(Double(max(0, sent.bytes - before.bytes)) * 8 / elapsed / 1000)
                }
                participant.screenSentBefore = (screen.mid, sent.framesSent, sent.bytes)
            } else {
                participant.screenSentBefore = nil
            }
            if let camera = figures.transceivers.first(where: { $0.mid == participant.camera.mid })?.sent {
                peer.cameraSent = .init(framesSent: camera.framesSent, framesEncoded: camera.framesEncoded,
                                        width: camera.width, height: camera.height, keyframes: camera.keyframesEncoded,
                                        codec: camera.encoder, targetKbps: camera.targetBitrate / 1000,
                                        maxKbps: camera.maxBitrate / 1000, capped: participant.cameraSent?.besideScreen)
            }
            if let audio = figures.transceivers.first(where: { $0.mid == participant.audio.mid })?.sent {
                peer.audioSent = .init(framesSent: audio.audioFramesSent, levelDbfs: audio.audioLevelDbfs ?? AudioLevel.silence,
                                       framesDropped: audio.audioFramesDropped, source: audio.audioSource ?? "",
                                       silent: audio.audioSilent)
            }
            if let theirs = participant.theirReport, let me = myID {
                peer.theirView = .init(screenFramesDecoded: theirs.screens.first { $0.from == me }?.framesDecoded,
                                       screenStalled: theirs.screens.first { $0.from == me }?.screenStalled,
                                       cameraFramesDecoded: theirs.cameras.first { $0.from == me }?.framesDecoded,
                                       hearsUs: theirs.hearing.contains(me))
            }
            stats.peers.append(peer)
        }
        // Which screens we report stalled: 4 s without any change of the decoded count, held up
        // to 3 minutes. Each section is a screen of its own: a rebuilt screen (another section) is
        // a new decoder whose count starts at zero, watched afresh.
        let key = { (id: String, mid: String?) in "\(id) \(mid ?? "-")" }
        let stalled = stallReporter.tick(now: now, decoded: Dictionary(uniqueKeysWithValues: decoded.map { (key($0.key, $0.value.mid), $0.value.frames) }))
        for index in stats.peers.indices {
            let id = stats.peers[index].id
            guard let screen = decoded[id] else { continue }
            let isStalled = stalled.contains(key(id, screen.mid))
            stats.peers[index].screen?.stalled = isStalled
            report.screens.append(.init(from: id, framesDecoded: screen.frames, screenStalled: isStalled))
        }
        stats.watchdog = watchdog?.status
        stats.faults = order.compactMap { id in
            participants[id]?.wedge.map { "decoder-wedge\($0.sticky ? "-sticky" : "") \(participants[id]?.name ?? id)" }
        } + senderFaults
        if signallingUp, myID != nil { send(.media(report)) }
        await watch.connections(healthy: healthy, now: now)
        await watch.signalling(up: signallingUp, now: now)
        stats.reconnecting = await watch.isReconnecting
        stats.reconnectingShown = await watch.timesShown
        stats.left = departed.map { $0.value }.sorted()
        stats.connectionsRenewed = connectionsRenewed
        snapshot = stats
        await renewFailedConnections(now: now)
    }

    private static func view(_ r: PeerConnectionStatistics.Received, tracker: ViewTracker, codec: MediaCodec?) -> CallStatistics.View {
        var view = CallStatistics.View()
        view.framesDecoded = r.framesDecoded
        view.width = r.width
        view.height = r.height
        view.fps = tracker.fps
        view.freezes = tracker.freezes
        view.packets = r.packets
        view.framesDropped = r.framesDropped
        view.keyframesDecoded = r.keyframesDecoded
        view.decodeErrors = r.decodeErrors
        view.plisSent = r.plisSent
        view.framesSwallowed = r.framesSwallowed
        view.framesAssembled = r.framesAssembled
        view.nacksSent = r.nacksSent
        view.rtxRecovered = r.rtxRecovered
        view.framesGivenUp = r.framesGivenUp
        view.codec = codec?.rawValue
        return view
    }

    /// The transceiver their screen arrives on: the one with the mid they announced, else a video
    /// section after the camera that receives and is not our own screen.
    private func remoteScreen(of participant: Participant) async -> Transceiver? {
        let candidates = await participant.connection.allTransceivers.filter { t in
            t.kind == .video && t !== participant.camera && t !== participant.screen
                && t.negotiated?.direction.receives == true
        }
        return candidates.first { $0.mid == participant.sharingMid } ?? candidates.last
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

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The watchdog reads the call and carries its steps out through `CallWatchdogLink`.
extension CallSession: CallWatchdogTarget {}
