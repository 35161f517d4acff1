import Foundation
import GLibLoop
import SDPWire
import ScreenCapture
import ShareCore
import ScreenWatchdog
import VideoSend
import CallMedia
import RoomProtocol
import Signalling
import WebRTCTransport

/// `sharectl share --whip URL`: one call leg to a WHIP endpoint (RFC 9725), a thin user of
/// `PeerConnection`; with `janus` set (`share --janus URL --janus-room ID`), the same leg published
/// into an existing Janus VideoRoom through Janus's own API instead of WHIP. It offers sendonly video (H.264 constrained baseline and VP8, each with RTX)
/// for the screen, a second sendonly video section for a camera beside it, and Opus audio, with
/// every candidate gathered; publishes the offer, sets the endpoint's answer, sends the screen,
/// the camera (capped beside the screen: `CappedCamera`) and the tone once connected, and ends
/// the session with DELETE.
///
/// An actor for its control state; media runs on the peer connection's threads (capture, encoder,
/// audio) and packets on the GLib loop thread: nothing per packet crosses this actor.
public actor WHIPShareSession {
    public struct Options: Sendable {
        public var endpoint: String
        public var token: String?
        /// Publish into this Janus VideoRoom instead of the WHIP endpoint.
        public var janus: JanusTarget?
        /// In a room of `sharectl serve --sfu janus`: the room's own socket, where the screen is
        /// announced and the viewers' reports come in. The watchdog's rebuild then asks that viewer
        /// to subscribe afresh, and its share again publishes the screen anew from the same capture.
        public var room: JanusRoomPresence?
        /// Send the screen as three simulcast layers (full, half and a quarter of the size), each
        /// with its own encoder, SSRC and RTX; an endpoint whose answer does not take them gets one.
        public var simulcast = false
        /// Offer only this codec (nil offers H.264 first, then VP8).
        public var codec: VideoCodec?
        public var width = 1920
        public var height = 1080
        public var framesPerSecond = 30
        /// The most the screen may use; congestion control sets the target below it.
        public var bitrate = 4_000_000
        public var policy = ScreenSendPolicy.balanced
        /// A keyframe at least this often, whatever the frame rate (`--keyframe-interval`).
        public var keyframeIntervalMicros = VideoEncodingThread.Settings.defaultKeyframeIntervalMicros
        /// H.264 through this hardware encoder rather than x264.
        public var hardwareEncoder: LibavH264Encoder.Backend?
        public var audio = true
        /// The Opus rate of the audio, bit/s (`--audio-bitrate`).
        public var audioBitrate = AudioSendThread.defaultBitrate
        /// Run the screen watchdog (restart a silent capture; keyframe, then a fresh encoder, for a
        /// screen that goes in but does not come out).
        public var watchdog = true
        public var loopbackOnly = false
        /// Interfaces or addresses to offer host candidates on besides 127.0.0.1 (`--ice-interface`;
        /// empty: every interface that is up).
        public var iceInterfaces: [String] = []
        /// Connect only through TURN relays (to test a relay path, or where direct is not allowed).
        public var relayOnly = false
        /// STUN and TURN servers to gather with from the start (the endpoint's own come later).
        public var stunServer: ICEAgent.STUNServer?
        public var turnServers: [ICEAgent.TURNServer] = []
        public var connectTimeout: Duration = .seconds(20)
        /// The video to send (nil: the synthetic screen at `width`×`height`, `framesPerSecond`).
        public var videoSource: (any VideoFrameSource)?
        /// Send the screen (false: the camera alone).
        public var screen = true
        /// The camera (the camera director's feed): beside the screen on a video section of its
        /// own, at most 500 kbit/s and 360 lines while the screen goes out; or alone when `screen`
        /// is false.
        public var camera: (any VideoFrameSource)?
        /// The camera's frames so far, for the figures.
        public var cameraFrameCount: (@Sendable () -> Int)?
        /// The limits of a camera beside the screen when it is not capped (it is, while the screen
        /// goes out). A camera alone goes up to `bitrate` at a 1280 long side.
        public var cameraDefaults = CappedCamera.Defaults()

        public init(endpoint: String, token: String? = nil, codec: VideoCodec? = nil) {
            self.endpoint = endpoint
            self.token = token
            self.codec = codec
        }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private let options: Options
    private let logger: Logger
    private var running: Running?
    /// The screen capture, made once for the session; each publish takes a branch of it, so a
    /// share again does not stop the capture.
    private var screen: (source: SupervisedSource, fanout: FrameFanOut<SupervisedSource>)?
    /// Publishing anew (the watchdog's share again): the connection counts as up meanwhile.
    private var republishing = false
    /// The screen is not shared for now (share off in a room on Janus): nothing is published, the
    /// capture is stopped, and the share goes on.
    private var paused = false
    /// When the first publish was up: the figures' seconds count from it across publishes.
    private var firstStartedMicros: Int64?
    private var link: ShareWatchdogLink?
    private var previousVideoBytes = 0
    private var previousLayerBytes: [String: Int] = [:]
    /// Each layer's frames encoded and sent at the last sample: the screen's own figures are the
    /// best active layer's, and when another layer becomes that one (the top layer back on) its
    /// rates count from its own last figures, not the other layer's.
    private var previousLayerFrames: [String: (encoded: Int, sent: Int)] = [:]
    private var previousCameraBytes = 0
    private var previousAudioBytes = 0

    /// What exists while the share runs.
    private struct Running {
        /// The screen as the watchdog sees it (nil for a camera alone).
        let screen: SupervisedSource?
        let connection: PeerConnection
        let signalling: Signaller
        let source: (any VideoFrameSource)?
        /// The first video section: the screen, or the camera when it goes alone.
        let video: Transceiver
        /// The camera's section (the same as `video` for a camera alone) and, beside a screen,
        /// the capped camera on it.
        let camera: Transceiver?
        let cappedCamera: CappedCamera?
        let startedMicros: Int64
    }

    /// Where the offer went: the WHIP session (ended with DELETE) or the Janus publisher (which
    /// leaves the room).
    enum Signaller: Sendable {
        case whip(WHIPClient)
        case janus(JanusPublisher)

        var label: String {
            switch self {
            case .whip: "WHIP"
            case .janus: "Janus"
            }
        }

        func stop() async {
            switch self {
            case .whip(let client): await client.stop()
            case .janus(let publisher): await publisher.stop()
            }
        }
    }

    /// The process's GLib loop, which the caller owns and stops.
    private let loop: GLibLoop

    public init(options: Options, loop: GLibLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
        Self.alive.withLock { $0[options.endpoint, default: 0] += 1 }
    }

    deinit {
        let endpoint = options.endpoint
        Self.alive.withLock { alive in
            alive[endpoint, default: 1] -= 1
            if alive[endpoint] == 0 { alive[endpoint] = nil }
        }
    }

    /// Sessions not yet freed, by endpoint: a share that publishes again must let the one it ended
    /// go (a kiosk reconnecting for weeks would otherwise grow by a whole session each time).
    static let alive = Locked<[String: Int]>([:])

    /// Connects and starts sending. Throws a one-line reason when the share cannot start; anything
    /// started by then is taken down again.
    public func start() async throws {
        let running = try await connect(loop: loop)
        self.running = running
        firstStartedMicros = running.startedMicros
        await announce(running)
        if options.watchdog, let screen = running.screen {
            let link = ShareWatchdogLink(
                connection: running.connection, video: running.video, source: screen, room: options.room,
                logger: logger)
            if options.room != nil {
                link.setShareAgain { [weak self] in try await self?.publishAgain() }
            }
            self.link = link
            let dog = ScreenWatchdog(probe: link, effector: link, logger: logger, origin: .now)
            watchdog = dog
            watchdogTask = Task { try? await dog.run() }
        }
    }

    /// Tells the room (on Janus) which feed our screen is.
    private func announce(_ running: Running) async {
        guard let room = options.room, case .janus(let publisher) = running.signalling else { return }
        await room.announce(feed: await publisher.publisherID)
    }

    /// The watchdog's share again in a room on Janus: the publisher leaves, and the screen is
    /// published anew from the same capture (a new feed; every viewer subscribes to it afresh).
    func publishAgain() async throws {
        guard let old = running, case .janus = old.signalling, screen != nil else {
            throw Failure(description: "only a share into a room on Janus can publish again")
        }
        logger.notice("sharing again: publishing the screen afresh from the same capture")
        republishing = true
        defer { republishing = false }
        await unpublish(old)
        try await publishFresh()
    }

    /// Share off or on in a room on Janus (SIGUSR1): off, the publisher leaves the room and the
    /// capture stops (the share and its room socket go on); on, the screen is published anew from
    /// the same capture. Returns whether the screen is shared now; nil where this share has no such
    /// switch (over WHIP, or without a screen), or a share on failed (said in a warning).
    public func toggleScreen() async -> Bool? {
        guard options.room != nil, let screen else { return nil }
        if !paused {
            guard let old = running, case .janus = old.signalling else { return nil }
            logger.notice("share off: the screen leaves the Janus room; the share goes on")
            paused = true
            link?.pause()
            await unpublish(old)
            screen.fanout.stop()
            return false
        }
        logger.notice("share on: publishing the screen into the Janus room again")
        screen.fanout.start()
        do {
            try await publishFresh()
            paused = false
            return true
        } catch {
            logger.warning("the screen could not be published again (SIGUSR1 tries again): \(error)")
            screen.fanout.stop()
            return nil
        }
    }

    /// Takes down a publish (the room told first), keeping the capture.
    private func unpublish(_ old: Running) async {
        await options.room?.announce(feed: nil)
        running = nil
        await old.connection.stopSending()
        await old.signalling.stop()
        await old.connection.close()
    }

    /// Publishes the screen anew and tells the room and the watchdog.
    private func publishFresh() async throws {
        let fresh = try await connect(loop: loop)
        running = fresh
        previousVideoBytes = 0
        previousLayerBytes = [:]
        previousLayerFrames = [:]
        previousCameraBytes = 0
        previousAudioBytes = 0
        link?.use(connection: fresh.connection, video: fresh.video)
        await announce(fresh)
    }

    private var watchdog: ScreenWatchdog<ContinuousClock>?
    private var watchdogTask: Task<Void, Never>?

    /// Fault injection for drills and tests (off unless asked for): `capture` stalls the screen's
    /// frames on their way to the encoder until the capture is restarted; `encoder` makes the
    /// encoder take frames and produce nothing until a fresh one is made.
    public func injectFault(_ fault: FaultDrill) -> String {
        guard let running else { return "no share is running" }
        switch fault {
        case .captureStall:
            guard let screen = running.screen else { return "this share has no screen capture" }
            screen.injectStall()
            logger.notice("fault injected: the screen capture stops delivering")
            return "Fault: the screen capture stops delivering frames"
        case .encoderStall:
            guard let encoder = running.video.media?.encoder else { return "this share has no video encoder" }
            encoder.injectStall()
            return "Fault: the encoder stops producing"
        case .decoderWedge, .clear:
            return "a WHIP share decodes nothing: '\(fault.word)' is a room viewer's fault"
        }
    }

    /// The endpoint's ICE servers (`Link: rel="ice-server"`) arrive with its answer, after we have
    /// gathered (libnice gathers relay candidates only with TURN known beforehand). So: connect with
    /// what we have; if ICE cannot connect and the endpoint named STUN or TURN servers we did not
    /// use, end that session and publish once more, gathering through them.
    private func connect(loop: GLibLoop) async throws -> Running {
        do {
            return try await attempt(loop: loop, stun: options.stunServer, turn: options.turnServers)
        } catch let retry as RetryThroughServers {
            logger.notice(
                "ICE could not connect (\(retry.reason)); publishing again through the endpoint's "
                    + "ICE servers: \(retry.servers.map(\.description).joined(separator: ", "))")
            return try await attempt(
                loop: loop, stun: retry.stun ?? options.stunServer,
                turn: options.turnServers + retry.turn, retrying: true)
        }
    }

    private struct RetryThroughServers: Error {
        let reason: String
        let servers: [WHIPICEServer]
        let stun: ICEAgent.STUNServer?
        let turn: [ICEAgent.TURNServer]
    }

    private func attempt(
        loop: GLibLoop, stun: ICEAgent.STUNServer?, turn: [ICEAgent.TURNServer],
        retrying: Bool = false
    ) async throws -> Running {
        var configuration = PeerConnection.Configuration(
            loopbackOnly: options.loopbackOnly, connectTimeout: options.connectTimeout)
        configuration.iceOptions = []  // the offer carries every candidate: no trickle
        configuration.ice.relayOnly = options.relayOnly
        configuration.ice.stunServer = stun
        configuration.ice.turnServers = turn
        if let codec = options.codec { configuration.capabilities.videoCodecs = [codec == .h264 ? .h264 : .vp8] }
        configuration.ice.allowedInterfaces = options.iceInterfaces
        let connection = try PeerConnection(loop: loop, configuration: configuration, logger: logger)
        if let janus = options.janus {
            return try await attemptJanus(janus, loop: loop, connection: connection)
        }
        let whip: WHIPClient
        let session: WHIPClient.Session
        let video: Transceiver, camera: Transceiver?
        do {
            video = try await connection.addTransceiver(
                kind: .video, direction: .sendonly,
                trackID: options.screen ? "screen" : "camera", simulcast: screenLayers)
            camera =
                options.screen && options.camera != nil
                ? try await connection.addTransceiver(kind: .video, direction: .sendonly, trackID: "camera") : nil
            if options.audio { try await connection.addTransceiver(kind: .audio, direction: .sendonly) }
            let offer = try await connection.createOffer()
            let http = HTTPClient(loop: loop)
            var whipConfiguration = WHIPClient.Configuration(endpoint: options.endpoint, bearerToken: options.token)
            whipConfiguration.timeout = .seconds(15)
            whip = try WHIPClient(configuration: whipConfiguration, http: http, logger: logger)
            session = try await whip.publish(offer: offer)
        } catch {
            await connection.close()
            throw error
        }
        logger.info("WHIP: session at \(session.resourceURL)")
        do {
            return try await establish(
                loop: loop, connection: connection, video: video, camera: camera, signalling: .whip(whip),
                answer: session.answer)
        } catch {
            await connection.stopSending()
            await whip.stop()
            await connection.close()
            let offered = Self.iceServers(session.iceServers)
            let unused = offered.turn.filter { !turn.contains($0) }
            if !retrying, "\(error)".contains("ICE"), !unused.isEmpty || (offered.stun != nil && stun == nil) {
                throw RetryThroughServers(
                    reason: "\(error)", servers: session.iceServers, stun: offered.stun, turn: unused)
            }
            throw error
        }
    }

    /// Into a Janus VideoRoom: the screen, a camera beside it and the audio, as over WHIP; Janus
    /// names no ICE servers, so there is no second attempt.
    private func attemptJanus(
        _ target: JanusTarget, loop: GLibLoop, connection: PeerConnection
    ) async throws -> Running {
        let publisher: JanusPublisher
        let video: Transceiver, camera: Transceiver?
        let answer: String
        do {
            video = try await connection.addTransceiver(
                kind: .video, direction: .sendonly, trackID: options.screen ? "screen" : "camera",
                simulcast: screenLayers)
            camera =
                options.screen && options.camera != nil
                ? try await connection.addTransceiver(kind: .video, direction: .sendonly, trackID: "camera") : nil
            if options.audio { try await connection.addTransceiver(kind: .audio, direction: .sendonly) }
            let offer = try await connection.createOffer()
            publisher = try JanusPublisher(target: target, loop: loop, logger: logger)
            answer = try await publisher.publish(offer: offer)
        } catch {
            await connection.close()
            throw error
        }
        do {
            return try await establish(
                loop: loop, connection: connection, video: video, camera: camera, signalling: .janus(publisher),
                answer: answer)
        } catch {
            await connection.stopSending()
            await publisher.stop()
            await connection.close()
            throw error
        }
    }

    /// The screen's simulcast layers when asked for (a camera alone goes as one stream).
    private var screenLayers: [String] { options.simulcast && options.screen ? Transceiver.screenLayers : [] }

    /// The endpoint's servers as ICE configuration: TURN entries need a username and credential;
    /// `turns:` becomes TLS, which the ICE agent says it cannot use.
    static func iceServers(_ servers: [WHIPICEServer]) -> (stun: ICEAgent.STUNServer?, turn: [ICEAgent.TURNServer]) {
        var stun: ICEAgent.STUNServer?
        var turn: [ICEAgent.TURNServer] = []
        for server in servers {
            switch server.scheme {
            case .stun:
                if stun == nil { stun = ICEAgent.STUNServer(host: server.host, port: server.port) }
            case .turn, .turns:
                guard let username = server.username, let credential = server.credential else { continue }
                let transport: ICEAgent.TURNServer.Transport =
                    server.scheme == .turns ? .tls : server.transport == .tcp ? .tcp : .udp
                turn.append(
                    ICEAgent.TURNServer(
                        host: server.host, port: server.port, username: username,
                        credential: credential, transport: transport))
            }
        }
        return (stun, turn)
    }

    private func establish(
        loop: GLibLoop, connection: PeerConnection, video: Transceiver, camera: Transceiver?,
        signalling: Signaller, answer: String
    ) async throws -> Running {
        do {
            try await connection.setRemoteDescription(answer, type: .answer)
        } catch .notSDP(let reason) {
            throw Failure(description: "\(signalling.label): the endpoint's answer is not valid SDP: \(reason)")
        } catch {
            throw Failure(description: "\(signalling.label): \(error)")
        }
        // Sources are attached now and start once DTLS-SRTP is up. The screen is made once and
        // each publish takes a branch of it; in a room on Janus it runs from the first publish to
        // the session's end, so a share again keeps it.
        if options.screen, self.screen == nil {
            let source = SupervisedSource(
                options.videoSource
                    ?? SyntheticScreenSource(
                        width: options.width, height: options.height, framesPerSecond: options.framesPerSecond))
            let fanout = FrameFanOut(source, running: options.room != nil ? .betweenStartAndStop : .whileBranchesRun)
            fanout.start()
            self.screen = (source, fanout)
        }
        let screen = self.screen?.source
        let sendsVideo = video.negotiated?.direction.sends == true
        // The screen starts now, beside ICE and DTLS, not once they are up: a PipeWire stream takes
        // 150-200 ms to negotiate (a portal's more), and the first frame waited for it. A branch
        // that drops its frames holds it running; the encoder's branch takes over from it when it
        // starts (no stop in between: an attended portal session ends with its capture), and on
        // any failure here it stops.
        // (In a room the screen already runs from the first publish to the session's end.)
        let early = sendsVideo && options.room == nil ? self.screen.map { $0.fanout.branch() } : nil
        early?.start { _ in }
        let source =
            self.screen.map { screen in
                early.map { screen.fanout.branch(takingOverFrom: $0) } ?? screen.fanout.branch()
            } ?? options.camera
        do {
            return try await attachAndConnect(
                connection: connection, video: video, camera: camera, signalling: signalling,
                screen: screen, source: source, sendsVideo: sendsVideo)
        } catch {
            early?.stop()
            throw error
        }
    }

    private func attachAndConnect(
        connection: PeerConnection, video: Transceiver, camera: Transceiver?, signalling: Signaller,
        screen: SupervisedSource?, source: (any VideoFrameSource)?, sendsVideo: Bool
    ) async throws -> Running {
        if sendsVideo, let source {
            // A screen goes out under its send policy; a camera alone is a camera (640-ish, 1280 at most).
            try await connection.attachVideoSource(
                source, to: video, bitrate: options.bitrate,
                framesPerSecond: options.framesPerSecond,
                maxLongSide: screen != nil ? 1920 : 1280,
                policy: options.policy, content: screen != nil ? .screen : .camera,
                hardwareEncoder: options.hardwareEncoder, keyframeIntervalMicros: options.keyframeIntervalMicros)
        }
        // A camera beside the screen: encoded as a camera, capped while the screen goes out.
        var capped: CappedCamera?
        if let camera, let feed = options.camera, camera.negotiated?.direction.sends == true {
            let defaults = options.cameraDefaults
            let source = CappedCamera(
                feed, connection: connection, transceiver: camera, defaults: defaults, besideScreen: true)
            try await connection.attachVideoSource(
                source, to: camera, bitrate: defaults.bitrate, framesPerSecond: 30,
                maxLongSide: defaults.longSide, content: .camera,
                hardwareEncoder: options.hardwareEncoder)
            capped = source
        } else if camera != nil {
            logger.warning("WHIP: the endpoint did not take the camera's section; the screen goes alone")
        }
        if let audio = await connection.allTransceivers.first(where: { $0.kind == .audio }),
            audio.negotiated?.direction.sends == true
        {
            try await connection.attachAudioTone(to: audio, toneLevelDbfs: -20, bitrate: options.audioBitrate)
        }
        try await connection.waitUntilConnected()
        return Running(
            screen: screen, connection: connection, signalling: signalling, source: source, video: video,
            camera: screen == nil ? video : capped == nil ? nil : camera, cappedCamera: capped,
            startedMicros: Clocks.monotonicMicros())
    }

    /// The figures of the moment; `previous` turns counts into rates.
    public func stats(previous: ShareStats?) async -> ShareStats {
        var stats = ShareStats()
        guard let running else {
            // Between two publishes (share again), or the screen off: the last figures stand,
            // nothing is sent; the new one connects, or there is none.
            guard republishing || paused, var last = previous, let first = firstStartedMicros else { return stats }
            last.t = Double(Clocks.monotonicMicros() - first) / 1_000_000
            last.connection.state = paused ? "closed" : "connecting"
            last.video.fpsEncoded = 0
            last.video.fpsSent = 0
            last.video.bitrateKbps = 0
            return last
        }
        let figures = await running.connection.statistics()
        let now = Clocks.monotonicMicros()
        stats.t = Double(now - (firstStartedMicros ?? running.startedMicros)) / 1_000_000
        let elapsed = max(0.001, stats.t - (previous?.t ?? 0))
        let videoFeedback = figures.transceiver(.video)?.feedback
        let audioFeedback = figures.transceiver(.audio)?.feedback
        if let codec = running.video.negotiated?.videoCodec, let sent = figures.transceiver(.video)?.sent,
            let encoder = sent.encoder
        {
            stats.video.content = running.screen == nil ? "camera" : "screen"
            stats.video.codec = codec.rawValue
            stats.video.encoder = encoder
            stats.video.width = sent.width
            stats.video.height = sent.height
            stats.video.framesCaptured = running.screen?.frameCount ?? options.cameraFrameCount?() ?? 0
            stats.video.framesEncoded = sent.framesEncoded
            stats.video.framesSent = sent.framesSent
            stats.video.keyframes = sent.keyframesEncoded
            stats.video.keyframeRequests = sent.keyframeRequests
            stats.video.pliReceived = videoFeedback?.pli ?? 0
            stats.video.firReceived = videoFeedback?.fir ?? 0
            stats.video.nacksReceived = videoFeedback?.nacks ?? 0
            stats.video.rtxSent = sent.rtxPackets
            stats.video.packetsSent = sent.packets
            stats.video.encodeErrors = sent.encodeErrors
            stats.video.targetKbps = sent.targetBitrate / 1000
            stats.video.policy = sent.policy ?? ""
            stats.video.fpsAllowed = sent.allowedFrameRate
            stats.video.limitedBy = sent.limitedBy ?? "none"
            stats.video.framesSkipped = sent.framesSkipped
            stats.video.framesRepeated = sent.framesRepeated
            stats.video.encodersMade = sent.encodersMade
            stats.video.encodeMs = (sent.encodeMs * 10).rounded() / 10
            stats.video.keyframeResponses = sent.keyframeResponses
            stats.video.keyframeResponseMaxMs = sent.keyframeResponseMaxMs.map { ($0 * 10).rounded() / 10 }
            stats.video.rtxSuppressed = sent.rtxRefused + sent.rtxTooSoon
            stats.video.overshootPercent = sent.overshootPercent
            stats.video.quantizer = sent.quantizer.map { ($0 * 10).rounded() / 10 }
            stats.video.framesDroppedForRate = sent.framesDroppedForRate
            stats.video.periodicKeyframes = sent.periodicKeyframes
            stats.video.smallerKeyframes = sent.smallerKeyframes
            stats.video.bitrateKbps = Int(Double(sent.bytes - previousVideoBytes) * 8 / elapsed / 1000)
            previousVideoBytes = sent.bytes
            if !sent.layers.isEmpty {
                stats.video.layers = sent.layers.map { figures in
                    var layer = ShareStats.Layer()
                    layer.rid = figures.rid
                    layer.active = figures.active
                    layer.width = figures.width
                    layer.height = figures.height
                    layer.framesSent = figures.framesSent
                    layer.keyframes = figures.keyframes
                    layer.nacksReceived = figures.nacksReceived
                    layer.rtxSent = figures.rtxPackets
                    layer.targetKbps = figures.targetBitrate / 1000
                    let before = previous?.video.layers?.first { $0.rid == figures.rid }
                    layer.fpsSent = Double(figures.framesSent - (before?.framesSent ?? 0)) / elapsed
                    layer.bitrateKbps = Int(
                        Double(figures.bytes - (previousLayerBytes[figures.rid] ?? 0)) * 8 / elapsed / 1000)
                    previousLayerBytes[figures.rid] = figures.bytes
                    return layer
                }
            }
            if let shown = sent.layers.first(where: \.active) ?? sent.layers.first {
                let before = previousLayerFrames[shown.rid] ?? (0, 0)
                stats.video.fpsEncoded = Double(max(0, shown.framesEncoded - before.encoded)) / elapsed
                stats.video.fpsSent = Double(max(0, shown.framesSent - before.sent)) / elapsed
                for layer in sent.layers { previousLayerFrames[layer.rid] = (layer.framesEncoded, layer.framesSent) }
            } else {
                stats.video.fpsEncoded = Double(sent.framesEncoded - (previous?.video.framesEncoded ?? 0)) / elapsed
                stats.video.fpsSent = Double(stats.video.framesSent - (previous?.video.framesSent ?? 0)) / elapsed
            }
        }
        if let camera = running.camera, let entry = figures.transceivers.first(where: { $0.mid == camera.mid }),
            let sent = entry.sent, sent.encoder != nil
        {
            var c = ShareStats.Camera()
            c.codec = camera.negotiated?.videoCodec?.rawValue ?? ""
            c.encoder = sent.encoder ?? ""
            c.framesCaptured = options.cameraFrameCount?() ?? 0
            c.framesEncoded = sent.framesEncoded
            c.framesSent = sent.framesSent
            c.keyframes = sent.keyframesEncoded
            c.width = sent.width
            c.height = sent.height
            c.targetKbps = sent.targetBitrate / 1000
            c.maxKbps = sent.maxBitrate / 1000
            c.maxLongSide = sent.maxLongSide
            c.capped = running.cappedCamera?.besideScreen ?? false
            c.bitrateKbps = Int(Double(sent.bytes - previousCameraBytes) * 8 / elapsed / 1000)
            previousCameraBytes = sent.bytes
            c.fpsSent = Double(sent.framesSent - (previous?.camera?.framesSent ?? 0)) / elapsed
            stats.camera = c
        }
        if let sent = figures.transceiver(.audio)?.sent {
            var audio = ShareStats.Audio()
            audio.framesSent = sent.audioFramesSent
            audio.framesDropped = sent.audioFramesDropped
            audio.levelDbfs = sent.audioLevelDbfs ?? AudioLevel.silence
            audio.bitrateKbps = Int(Double(sent.bytes - previousAudioBytes) * 8 / elapsed / 1000)
            previousAudioBytes = sent.bytes
            stats.audio = audio
        }
        stats.watchdog = watchdog?.status
        let t = figures.transport
        stats.connection.state = t.state.description
        stats.connection.ice = t.iceState
        stats.connection.pair = t.selectedPair
        stats.connection.relayed = t.relayed
        stats.connection.srtpProfile = t.srtpProfile
        stats.connection.rttMs = videoFeedback?.rttMs ?? audioFeedback?.rttMs
        stats.connection.fractionLost = videoFeedback?.fractionLost
        stats.connection.remb = videoFeedback?.remb ?? audioFeedback?.remb
        stats.connection.bytesSent = t.bytesSent
        stats.connection.bytesReceived = t.bytesReceived
        stats.connection.rtcpReceived = t.rtcpReceived
        stats.connection.droppedDatagrams = t.droppedDatagrams
        if let c = figures.congestion {
            var congestion = ShareStats.Congestion()
            congestion.inputs = c.estimate.inputs
            congestion.targetKbps = c.targetBitrate / 1000
            congestion.sentKbps = c.estimate.sentBitrate / 1000
            congestion.repairKbps = c.repairBitrate / 1000
            congestion.overheadKbps = c.overheadBitrate / 1000
            congestion.action = c.estimate.reportAction
            congestion.rembKbps = c.estimate.rembBitrate.map { $0 / 1000 }
            congestion.lossFraction = c.estimate.lossFraction
            congestion.pathLoss = c.estimate.pathLoss
            congestion.probeKbps = c.estimate.probeBitrate.map { $0 / 1000 }
            let padding = c.pacer.counters.paddingBytes
            congestion.paddingBytes = padding > 0 ? padding : nil
            let waited = c.pacer.counters.retransmissionsWaited
            congestion.repairsWaited = waited > 0 ? waited : nil
            congestion.repairsExpired = waited > 0 ? c.pacer.counters.retransmissionsExpired : nil
            stats.congestion = congestion
        }
        return stats
    }

    /// Changes the screen's send policy from its next frame, with no renegotiation.
    public func setPolicy(_ policy: ScreenSendPolicy) async {
        guard let running else { return }
        await running.connection.setPolicy(policy, on: running.video)
        logger.notice("send policy: \(policy.label)", ["video.policy": policy.rawValue])
    }

    /// Asks for a keyframe now (as a receiver's PLI would).
    public func requestKeyframe() async {
        guard let running else { return }
        await running.connection.requestKeyframe(on: running.video)
    }

    /// True while the connection is up (it fails when consent is lost or DTLS closes).
    public var isConnected: Bool { republishing || paused || running?.connection.state == .connected }
    public var connectionState: String { running?.connection.state.description ?? "closed" }

    /// Stops media, ends the WHIP session with DELETE and closes the connection.
    public func stop() async {
        watchdogTask?.cancel()
        await watchdogTask?.value
        watchdogTask = nil
        if let running {
            self.running = nil
            await running.connection.stopSending()
            await running.signalling.stop()
            await running.connection.close()
        }
        screen?.fanout.stop()
        screen = nil
    }
}
