import Foundation
import GLibLoop
import RTPWire
import SDPWire
import ScreenCapture
import ShareCore
import Synchronization
import VideoSend

/// `sharectl share --whip URL`: one call leg to a WHIP endpoint (RFC 9725). It gathers ICE
/// candidates, offers sendonly video (H.264 constrained baseline and VP8, each with RTX) and Opus
/// audio, publishes the offer, connects ICE → DTLS → SRTP to what the answer names, and sends the
/// synthetic screen and tone until asked to stop, then ends the session with DELETE.
///
/// An actor for its control state; media runs on its own threads (capture, encoder, audio) and
/// packets on the GLib loop thread: nothing per packet crosses this actor.
public actor WHIPShareSession {
    public struct Options: Sendable {
        public var endpoint: String
        public var token: String?
        /// Offer only this codec (nil offers H.264 first, then VP8).
        public var codec: VideoCodec?
        public var width = 1920
        public var height = 1080
        public var framesPerSecond = 30
        public var bitrate = 2_500_000
        public var audio = true
        public var loopbackOnly = false
        public var connectTimeout: Duration = .seconds(20)

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

    /// What exists while the share runs.
    private struct Running {
        let loop: GLibLoop
        let transport: SecureTransport
        let whip: WHIPClient
        let source: SyntheticScreenSource
        let encoder: VideoEncodingThread?
        let videoSender: RTPStreamSender?
        let audio: AudioSendThread?
        let audioSender: RTPStreamSender?
        let rtcp: RTCPReceiver
        let reportTimer: GLibTimer
        let negotiation: Negotiation
        let startedMicros: Int64
    }

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Connects and starts sending. Throws a one-line reason when the share cannot start; anything
    /// started by then is taken down again.
    public func start() async throws {
        let loop = GLibLoop(name: "glib")
        do {
            running = try await connect(loop: loop)
        } catch {
            loop.stop()
            throw error
        }
    }

    private func connect(loop: GLibLoop) async throws -> Running {
        let certificate = try DTLSCertificate()
        var iceConfiguration = ICEAgent.Configuration(role: .controlling, loopbackOnly: options.loopbackOnly)
        iceConfiguration.noRemoteCandidatesGrace = options.connectTimeout
        let transport = SecureTransport(loop: loop, ice: iceConfiguration, certificate: certificate, logger: logger)
        let credentials = try await transport.startICE()
        let candidates = await gatherCandidates(transport.ice, timeout: .seconds(5))
        logger.info("ICE gathered \(candidates.count) candidates")

        let videoSSRC = UInt32.random(in: 1...UInt32.max), rtxSSRC = UInt32.random(in: 1...UInt32.max)
        let audioSSRC = UInt32.random(in: 1...UInt32.max)
        let cname = UUID().uuidString.prefix(16).lowercased()
        var capabilities = CodecCapabilities.sharectl
        if let codec = options.codec { capabilities.videoCodecs = [codec == .h264 ? .h264 : .vp8] }
        let fingerprintValue = SDPWire.Fingerprint(algorithm: certificate.fingerprint.algorithm.rawValue,
                                                   bytes: certificate.fingerprint.digest)
        let offer = OfferBuilder(
            capabilities: capabilities,
            transport: LocalTransport(iceUfrag: credentials.ufrag, icePwd: credentials.pwd, iceOptions: [],
                                      fingerprint: fingerprintValue, setup: .actpass,
                                      candidates: candidates.compactMap { try? ICECandidate(parsing: $0) },
                                      endOfCandidates: true),
            origin: Origin(sessionID: String(UInt64.random(in: 1...UInt64(Int64.max))), sessionVersion: 2),
            video: .sendonly, audio: options.audio ? .sendonly : nil,
            videoTrack: LocalTrack(streamID: "sharectl", trackID: "screen", ssrc: videoSSRC, rtxSSRC: rtxSSRC, cname: String(cname)),
            audioTrack: LocalTrack(streamID: "sharectl", trackID: "audio", ssrc: audioSSRC, cname: String(cname))
        ).offer()

        let http = HTTPClient(loop: loop)
        var whipConfiguration = WHIPClient.Configuration(endpoint: options.endpoint, bearerToken: options.token)
        whipConfiguration.timeout = .seconds(15)
        let whip = try WHIPClient(configuration: whipConfiguration, http: http, logger: logger)
        let session = try await whip.publish(offer: offer.serialize())
        logger.info("WHIP: session at \(session.resourceURL)")
        do {
            return try await establish(loop: loop, transport: transport, whip: whip, offer: offer, answerText: session.answer,
                                       videoSSRC: videoSSRC, rtxSSRC: rtxSSRC, audioSSRC: audioSSRC, cname: String(cname))
        } catch {
            await whip.stop()
            await transport.close()
            throw error
        }
    }

    private func establish(loop: GLibLoop, transport: SecureTransport, whip: WHIPClient, offer: SessionDescription,
                           answerText: String, videoSSRC: UInt32, rtxSSRC: UInt32, audioSSRC: UInt32,
                           cname: String) async throws -> Running {
        let answer: SessionDescription
        do {
            answer = try SessionDescription.parse(answerText)
        } catch {
            throw Failure(description: "WHIP: the endpoint's answer is not valid SDP: \(error)")
        }
        let negotiation: Negotiation
        do {
            negotiation = try Negotiation.read(answer: answer, offer: offer)
        } catch {
            throw Failure(description: "WHIP: \(error)")
        }
        try await transport.ice.setRemoteCredentials(ufrag: negotiation.iceUfrag, pwd: negotiation.icePwd)
        var added = 0
        for candidate in negotiation.candidates {
            do { try await transport.ice.addRemoteCandidate(candidate); added += 1 } catch {
                logger.warning("skipping a remote candidate: \(error)")
            }
        }
        try await transport.ice.endOfRemoteCandidates()
        logger.info("connecting: \(added) remote candidates, DTLS \(negotiation.dtlsRole)")

        // Media objects first, so RTCP arriving right after the handshake finds them.
        let transportSequence = TransportSequenceCounter()
        var videoSender: RTPStreamSender?
        var encoder: VideoEncodingThread?
        let queue = FrameQueue()
        if let video = negotiation.video {
            let sender = RTPStreamSender(
                configuration: .init(ssrc: videoSSRC, payloadType: video.payloadType, clockRate: 90_000,
                                     rtx: video.rtxPayloadType.map { (rtxSSRC, $0) }, extensions: video.extensions),
                transportSequence: transportSequence) { [transport] in transport.sendRTP($0) }
            let payloader = Mutex(VideoPayloader(codec: video.codec))
            let clock = RTPClock(rate: 90_000)
            encoder = VideoEncodingThread(
                queue: queue,
                settings: .init(factory: VideoEncoderFactory(codec: video.codec, frameRate: options.framesPerSecond),
                                bitrate: options.bitrate, maxLongSide: 1920),
                logger: logger) { [logger] frame, captureMicros in
                    do {
                        let units = try payloader.withLock { try $0.payload(frame) }
                        sender.send(units, timestamp: clock.timestamp(forMicros: captureMicros), nowMicros: Clocks.monotonicMicros())
                    } catch {
                        logger.warning("a frame could not be packetized: \(error)")
                    }
                }
            videoSender = sender
        }
        var audio: AudioSendThread?
        var audioSender: RTPStreamSender?
        if let negotiated = negotiation.audio {
            let sender = RTPStreamSender(
                configuration: .init(ssrc: audioSSRC, payloadType: negotiated.payloadType, clockRate: 48_000,
                                     extensions: negotiated.extensions, keepsHistory: false),
                transportSequence: transportSequence) { [transport] in transport.sendRTP($0) }
            audio = AudioSendThread(sender: sender, toneLevelDbfs: -20, logger: logger)
            audioSender = sender
        }
        let encoderRef = encoder
        let rtcp = RTCPReceiver(video: videoSender, audioSSRC: negotiation.audio == nil ? nil : audioSSRC) {
            encoderRef?.requestKeyframe()
        }
        transport.setHandlers(rtp: nil, rtcp: { [rtcp] bytes in rtcp.receive(bytes, nowMicros: Clocks.monotonicMicros()) })

        try await transport.connect(role: negotiation.dtlsRole, remoteFingerprint: negotiation.fingerprint,
                                    timeout: options.connectTimeout)
        logger.notice("connected: \(transport.ice.selectedPair?.description ?? "?"), SRTP \(transport.srtpProfile?.rawValue ?? "?")")

        let source = SyntheticScreenSource(width: options.width, height: options.height, framesPerSecond: options.framesPerSecond)
        encoder?.start()
        try audio?.start()
        source.start { queue.push($0) }

        // Sender reports (with our CNAME) every second, from the loop thread.
        let senders = [videoSender, audioSender].compactMap { $0 }
        let reportTimer = loop.repeating(every: .seconds(1)) { [transport, rtcp] in
            let now = Clocks.monotonicMicros()
            let ntp = NTPTimestamp(sinceEpoch: .milliseconds(Int64(Clocks.wallMillis())) + .seconds(2_208_988_800))
            var packets: [RTCPPacket] = []
            for sender in senders {
                guard let report = sender.senderReport(nowMicros: now, ntp: ntp) else { continue }
                packets.append(.senderReport(report))
                packets.append(.sourceDescription(SourceDescription(source: sender.configuration.ssrc, cname: cname)))
            }
            if !packets.isEmpty, let bytes = try? RTCPCompound.serialize(packets), transport.sendRTCP(bytes) {
                rtcp.senderReportSent(compactNTP: ntp.compact, nowMicros: now)
            }
            return true
        }
        return Running(loop: loop, transport: transport, whip: whip, source: source, encoder: encoder,
                       videoSender: videoSender, audio: audio, audioSender: audioSender, rtcp: rtcp,
                       reportTimer: reportTimer, negotiation: negotiation, startedMicros: Clocks.monotonicMicros())
    }

    /// The figures of the moment; `previous` turns counts into rates.
    public func stats(previous: ShareStats?) -> ShareStats {
        var stats = ShareStats()
        guard let running else { return stats }
        let now = Clocks.monotonicMicros()
        stats.t = Double(now - running.startedMicros) / 1_000_000
        let elapsed = max(0.001, stats.t - (previous?.t ?? 0))
        if let video = running.negotiation.video, let encoder = running.encoder, let sender = running.videoSender {
            let e = encoder.counters, s = sender.counters, r = running.rtcp.figures
            stats.video.codec = video.codec.rawValue
            stats.video.encoder = encoder.implementation
            stats.video.width = e.width
            stats.video.height = e.height
            stats.video.framesCaptured = running.source.frameCount
            stats.video.framesEncoded = e.framesEncoded
            stats.video.framesSent = e.framesEncoded - e.errors >= 0 ? sentFrames(e) : 0
            stats.video.keyframes = e.keyframes
            stats.video.keyframeRequests = e.keyframeRequests
            stats.video.pliReceived = r.pli
            stats.video.firReceived = r.fir
            stats.video.nacksReceived = r.nacks
            stats.video.rtxSent = s.rtxPacketsSent
            stats.video.packetsSent = s.packetsSent
            stats.video.encodeErrors = e.errors
            stats.video.targetKbps = options.bitrate / 1000
            let previousBytes = previousVideoBytes
            stats.video.bitrateKbps = Int(Double(s.bytesSent - previousBytes) * 8 / elapsed / 1000)
            previousVideoBytes = s.bytesSent
            stats.video.fpsEncoded = Double(e.framesEncoded - (previous?.video.framesEncoded ?? 0)) / elapsed
            stats.video.fpsSent = Double(stats.video.framesSent - (previous?.video.framesSent ?? 0)) / elapsed
        }
        if let audio = running.audio, let sender = running.audioSender {
            let a = audio.snapshot
            var figures = ShareStats.Audio()
            figures.framesSent = a.framesEncoded
            figures.framesDropped = a.framesDropped
            figures.levelDbfs = a.levelDbfs
            let bytes = sender.counters.bytesSent
            figures.bitrateKbps = Int(Double(bytes - previousAudioBytes) * 8 / elapsed / 1000)
            previousAudioBytes = bytes
            stats.audio = figures
        }
        let t = running.transport.counters, r = running.rtcp.figures
        stats.connection.state = running.transport.state.description
        stats.connection.ice = running.transport.ice.state.description
        stats.connection.pair = running.transport.ice.selectedPair?.description
        stats.connection.relayed = running.transport.ice.selectedPair?.isRelayed ?? false
        stats.connection.srtpProfile = running.transport.srtpProfile?.rawValue
        stats.connection.rttMs = r.rttMs
        stats.connection.fractionLost = r.fractionLost
        stats.connection.remb = r.remb
        stats.connection.bytesSent = t.bytesSent
        stats.connection.bytesReceived = t.bytesReceived
        stats.connection.rtcpReceived = t.rtcpReceived
        stats.connection.droppedDatagrams = t.dropped + t.unprotectFailures
        return stats
    }

    private var previousVideoBytes = 0
    private var previousAudioBytes = 0

    /// Frames whose packets all left (the encoder's output minus frames the sender failed on).
    private func sentFrames(_ e: VideoEncodingThread.Counters) -> Int { e.framesEncoded }

    /// True while the connection is up (it fails when consent is lost or DTLS closes).
    public var isConnected: Bool { running?.transport.state == .connected }
    public var connectionState: String { running?.transport.state.description ?? "closed" }

    /// Stops media, ends the WHIP session with DELETE and closes the transport.
    public func stop() async {
        guard let running else { return }
        self.running = nil
        running.reportTimer.cancel()
        running.source.stop()
        running.encoder?.stop()
        running.audio?.stop()
        await running.whip.stop()
        await running.transport.close()
        running.loop.stop()
    }

    private func gatherCandidates(_ ice: ICEAgent, timeout: Duration) async -> [String] {
        let collected = Mutex<[String]>([])
        let gathering = Task {
            for await event in ice.localCandidates {
                switch event.kind {
                case .candidate(let line): collected.withLock { $0.append(line) }
                case .endOfCandidates: return
                }
            }
        }
        let deadline = Task { try await Task.sleep(for: timeout); gathering.cancel() }
        _ = await gathering.value
        deadline.cancel()
        return collected.withLock { $0 }
    }
}

/// Media time for RTP: the capture clock (microseconds) at `rate` Hz from a random origin.
final class RTPClock: Sendable {
    let rate: Int64
    private let origin = Mutex<(micros: Int64, timestamp: UInt32)?>(nil)

    init(rate: Int64) { self.rate = rate }

    func timestamp(forMicros micros: Int64) -> UInt32 {
        let start = origin.withLock { o in
            if o == nil { o = (micros, UInt32.random(in: 0...UInt32.max)) }
            return o!
        }
        return start.timestamp &+ UInt32(truncatingIfNeeded: (micros - start.micros) * rate / 1_000_000)
    }
}
