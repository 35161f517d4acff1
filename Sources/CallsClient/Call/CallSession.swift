import Foundation
import GLibLoop
import SDPWire
import ScreenCapture
import ShareCore
import VideoSend

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
        var pendingCandidates: [String] = []
        var needsOffer = false
        /// Our camera on their connection, capped while we share.
        var cameraSent: CappedCamera?
        var screenView = ViewTracker()
        var cameraView = ViewTracker()
        var theirReport: RoomMessage.Media?

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
    private var myID: String?
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

    public init(options: Options, logger: Logger) throws(Failure) {
        self.options = options
        self.logger = logger
        socketURL = try Self.socketURL(invite: options.invite)
        cameraFanOut = options.cameraFeed.map(FrameFanOut.init)
        loop = GLibLoop(name: "call")
    }

    /// `http[s]://HOST:PORT/r/ROOM?t=TOKEN` → `ws[s]://HOST:PORT/ws/ROOM?t=TOKEN`.
    public static func socketURL(invite: String) throws(Failure) -> String {
        guard var parts = URLComponents(string: invite), let scheme = parts.scheme?.lowercased(),
              ["http", "https", "ws", "wss"].contains(scheme), parts.host != nil else {
            throw Failure(description: "'\(invite)' is not a room link (http://HOST:PORT/r/ROOM?t=TOKEN)")
        }
        let segments = parts.path.split(separator: "/")
        guard segments.count == 2, segments[0] == "r" || segments[0] == "ws", !segments[1].isEmpty else {
            throw Failure(description: "'\(invite)' is not a room link: its path is not /r/ROOM")
        }
        guard parts.queryItems?.contains(where: { $0.name == "t" && !($0.value ?? "").isEmpty }) == true else {
            throw Failure(description: "'\(invite)' has no invite token (?t=…)")
        }
        parts.scheme = scheme == "https" || scheme == "wss" ? "wss" : "ws"
        parts.path = "/ws/\(segments[1])"
        guard let url = parts.string else { throw Failure(description: "'\(invite)' cannot be turned into a WebSocket address") }
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
        if options.shareScreen { sharing = true }
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
        loop.stop()
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
            if !on { participant.screenView.reset() }
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
        let known = participants[signal.peer]
        let made = known == nil ? await participant(signal.peer, name: signal.peer) : nil
        guard let participant = known ?? made else { return }
        let pc = participant.connection
        switch signal.kind {
        case .offer:
            if await pc.hasPendingLocalOffer {
                // Glare: the larger id number rolls back its own offer and answers.
                guard Self.number(myID) > Self.number(participant.id) else {
                    logger.info("glare with \(participant.name): keeping our offer")
                    return
                }
                await pc.rollback()
                participant.needsOffer = true
            }
            do {
                try await pc.setRemoteDescription(signal.sdp ?? "", type: .offer)
                await flushCandidates(participant)
                let answer = try await pc.createAnswer()
                send(.signal(.init(peer: participant.id, kind: .answer, sdp: answer)))
                await attachMedia(participant)
            } catch {
                logger.warning("could not answer \(participant.name): \(error)")
                return
            }
        case .answer:
            do {
                try await pc.setRemoteDescription(signal.sdp ?? "", type: .answer)
                await flushCandidates(participant)
                await attachMedia(participant)
            } catch {
                logger.warning("the answer of \(participant.name) was refused: \(error)")
                return
            }
        case .candidate:
            participant.pendingCandidates.append(signal.candidate ?? "")
            await flushCandidates(participant)
            return
        }
        let screenWanted = await needsScreenOffer(participant)
        if participant.needsOffer || screenWanted { await negotiate(participant) }
    }

    /// Our screen section is wanted but not yet offered or not yet in the state we want.
    private func needsScreenOffer(_ participant: Participant) async -> Bool {
        guard let screen = participant.screen else { return false }
        guard let negotiated = screen.negotiated else { return true }
        return negotiated.direction != (screen.direction == .inactive ? .inactive : .sendonly)
    }

    private func flushCandidates(_ participant: Participant) async {
        let pc = participant.connection
        guard await pc.hasNegotiated || !participant.pendingCandidates.isEmpty else { return }
        var kept: [String] = []
        for line in participant.pendingCandidates {
            do {
                if line.isEmpty { try await pc.endOfRemoteCandidates() } else { try await pc.addRemoteCandidate(line) }
            } catch PeerConnectionError.wrongState {
                kept.append(line)  // before the remote description: keep for later
            } catch {
                logger.debug("a candidate of \(participant.name) was skipped: \(error)")
            }
        }
        participant.pendingCandidates = kept
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
                try await pc.attachVideoSource(
                    SyntheticScreenSource(width: options.screenWidth, height: options.screenHeight, framesPerSecond: options.framesPerSecond),
                    to: screen, bitrate: options.screenBitrate, framesPerSecond: options.framesPerSecond, maxLongSide: 1920)
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
        for id in order {
            guard let participant = participants[id] else { continue }
            let figures = await participant.connection.statistics()
            var peer = CallStatistics.Peer(id: id, name: participant.name)
            peer.sharing = participant.sharing
            let state = participant.connection.state
            peer.connection.state = state.description
            peer.connection.pair = figures.transport.selectedPair
            peer.connection.rttMs = figures.transport.rttMs
            if case .failed = state { healthy = false }

            // What they send us.
            peer.camera = .init()
            peer.audio = .init()
            if let camera = figures.transceivers.first(where: { $0.mid == participant.camera.mid })?.received {
                participant.cameraView.update(frames: camera.framesDecoded, now: now, elapsed: elapsed)
                peer.camera = Self.view(camera, tracker: participant.cameraView, codec: participant.camera.negotiated?.codec)
                report.cameras.append(.init(from: id, framesDecoded: camera.framesDecoded))
            }
            let remote = participant.sharing ? await remoteScreen(of: participant) : nil
            if let screen = remote, let received = figures.transceivers.first(where: { $0.mid == screen.mid })?.received {
                participant.screenView.update(frames: received.framesDecoded, now: now, elapsed: elapsed)
                let stalled = participant.screenView.stalled(now: now)
                peer.screen = Self.view(received, tracker: participant.screenView, codec: screen.negotiated?.codec)
                peer.screen?.stalled = stalled
                peer.screen?.mid = screen.mid
                report.screens.append(.init(from: id, framesDecoded: received.framesDecoded, screenStalled: stalled))
            } else if participant.sharing {
                participant.screenView.update(frames: 0, now: now, elapsed: elapsed)
                let stalled = participant.screenView.stalled(now: now)
                peer.screen = .init(stalled: stalled)
                report.screens.append(.init(from: id, framesDecoded: 0, screenStalled: stalled))
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
        if signallingUp, myID != nil { send(.media(report)) }
        await watch.connections(healthy: healthy, now: now)
        await watch.signalling(up: signallingUp, now: now)
        stats.reconnecting = await watch.isReconnecting
        stats.reconnectingShown = await watch.timesShown
        stats.left = departed.map { $0.value }.sorted()
        snapshot = stats
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

    private static func number(_ id: String?) -> Int {
        Int((id ?? "").drop { !$0.isNumber }) ?? 0
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
