import Foundation
import GLibLoop
import SDPWire
import ShareCore
import VideoSend
import WebRTCTransport

/// One call leg in the manner of WebRTC's RTCPeerConnection, Swift-shaped:
///
///     let pc = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: logger)
///     let video = try await pc.addTransceiver(kind: .video, direction: .sendonly)
///     let offer = try await pc.createOffer()            // gathers first, then SDP text
///     try await pc.setRemoteDescription(answer, type: .answer)
///     try await pc.attachVideoSource(screen, to: video) // encodes once connected
///     try await pc.waitUntilConnected()
///
/// and on the answering side `setRemoteDescription(offer, type: .offer)`, then `createAnswer()`.
/// Offers say `a=setup:actpass`; answers say `active` (we answer as the DTLS client). Candidates
/// are gathered before a description is written (all of them, with `a=end-of-candidates`); trickle
/// users also get them on `localCandidates` and pass the peer's to `addRemoteCandidate`.
///
/// Any number of transceivers of each kind, one section each. After the first exchange either
/// side may offer again (renegotiation: a section added, a direction changed); settled payload
/// types and extension ids are kept, media of unchanged sections goes on, and the transport is
/// not touched (no ICE restart). On glare the caller rolls back its own offer (`rollback()`).
/// Once the first exchange completes the connection connects by itself (ICE, then DTLS, then
/// SRTP); `stateChanges` says how it goes.
///
/// An actor for control state. Packets never cross it: RTP and RTCP run on the GLib loop thread,
/// encoders, audio and video decoding on threads of their own (see `TransceiverMedia`).
public actor PeerConnection {
    public typealias State = SecureTransport.State

    public enum DescriptionType: String, Sendable {
        case offer, answer
    }

    public struct Configuration: Sendable {
        /// How ICE gathers and checks; its `role` is set by who offers (the offerer controls).
        public var ice: ICEAgent.Configuration
        /// Codecs offered and accepted, in order of preference.
        public var capabilities: CodecCapabilities
        /// How long ICE + DTLS may take before the connection fails.
        public var connectTimeout: Duration
        /// How long `createOffer`/`createAnswer` wait for gathering to finish.
        public var gatheringTimeout: Duration
        /// `a=ice-options` we write. `trickle` by default: `addRemoteCandidate` takes late
        /// candidates. (An empty list writes an empty `a=ice-options:` line, which SDPWire's own
        /// parser refuses: only for peers that are known to take it.)
        public var iceOptions: [ICEOption]
        /// How many audio and video sections of a remote offer get a transceiver; the answer
        /// rejects the rest.
        public var sectionLimit: SectionLimit
        /// `a=msid` stream id and RTCP CNAME.
        public var streamID: String
        public var cname: String

        public init(
            loopbackOnly: Bool = false, capabilities: CodecCapabilities = .sharectl,
            connectTimeout: Duration = .seconds(20)
        ) {
            var ice = ICEAgent.Configuration(role: .controlling, loopbackOnly: loopbackOnly)
            ice.noRemoteCandidatesGrace = connectTimeout
            self.ice = ice
            self.capabilities = capabilities
            self.connectTimeout = connectTimeout
            gatheringTimeout = .seconds(5)
            iceOptions = [.trickle]
            sectionLimit = .sharectl
            streamID = "sharectl"
            cname = String(UUID().uuidString.prefix(16).lowercased())
        }
    }

    /// State changes in order (new, connecting, connected, failed(reason), closed), ending at
    /// `closed`. One consumer.
    public nonisolated let stateChanges: AsyncStream<State>
    /// Our candidates as they are gathered, then end-of-candidates; ends at `close()`. One consumer.
    public nonisolated let localCandidates: AsyncStream<ICEAgent.LocalCandidateEvent>

    let loop: GLibLoop
    let logger: Logger
    let configuration: Configuration
    let certificate: DTLSCertificate
    let stateBox: ConnectionStateBox
    let candidateContinuation: AsyncStream<ICEAgent.LocalCandidateEvent>.Continuation
    let gathered = Locked<[String]>([])
    /// Opens when gathering has finished.
    let gatheringDone = Latch()
    var transceivers: [Transceiver] = []
    var leg: CallLegMedia?
    var credentials: ICEAgent.Credentials?
    var gatherTask: Task<Void, Never>?
    var connectTask: Task<Void, Never>?
    var localDescription: SessionDescription?
    var remoteDescription: SessionDescription?
    var weOffered: Bool?
    enum Signaling { case stable, haveLocalOffer(SessionDescription), haveRemoteOffer(SessionDescription) }
    var signaling = Signaling.stable
    var established = false
    var dtlsRole: DTLSRole?
    var remoteICE: String?
    /// The peer's candidates that came before its description, applied once with it.
    var earlyCandidates = EarlyCandidates()
    let sessionID = String(UInt64.random(in: 1...UInt64(Int64.max)))
    var sessionVersion: UInt64 = 1
    var closed = false

    /// `loop` runs libnice and the packet work; the caller owns it and stops it after `close()`.
    public init(loop: GLibLoop, configuration: Configuration, logger: Logger) throws(PeerConnectionError) {
        self.loop = loop
        self.configuration = configuration
        self.logger = logger
        do {
            certificate = try DTLSCertificate()
        } catch {
            throw .localFailure("could not make the DTLS certificate: \(error)")
        }
        let (states, stateContinuation) = AsyncStream.makeStream(of: State.self)
        stateChanges = states
        stateBox = ConnectionStateBox(continuation: stateContinuation)
        (localCandidates, candidateContinuation) = AsyncStream.makeStream(of: ICEAgent.LocalCandidateEvent.self)
    }

    // MARK: Transceivers

    /// Adds a transceiver: before the first offer or answer, or later for a renegotiation (the
    /// next `createOffer` adds its section). `trackID` names what it sends in `a=msid`.
    /// `simulcast` (video that sends): the layers' RIDs, best first (`Transceiver.screenLayers`),
    /// offered with `a=rid` and `a=simulcast`; an answer that takes fewer than two gets one stream.
    @discardableResult
    public func addTransceiver(
        kind: Transceiver.Kind, direction: MediaDirection,
        trackID: String? = nil, simulcast: [String] = []
    ) throws(PeerConnectionError) -> Transceiver {
        try requireOpen()
        let transceiver = Transceiver(
            index: transceivers.count, kind: kind, direction: direction, trackID: trackID,
            simulcastRIDs: direction.sends ? simulcast : [])
        transceivers.append(transceiver)
        return transceiver
    }

    /// Changes the direction we want for `transceiver` (e.g. `inactive` when a screen share
    /// ends). It takes effect with the next offer or answer; media stops when that exchange ends.
    public func setDirection(_ direction: MediaDirection, of transceiver: Transceiver) {
        transceiver.setDirection(direction)
    }

    public var allTransceivers: [Transceiver] { transceivers }
    public nonisolated var state: State { stateBox.state }
    /// Our fingerprint as SDP writes it (`sha-256 AB:CD:…`).
    public nonisolated var fingerprint: DTLSFingerprint { certificate.fingerprint }
    /// True while an offer of ours waits for its answer.
    public var hasPendingLocalOffer: Bool {
        if case .haveLocalOffer = signaling { return true }
        return false
    }
    /// True once an offer/answer exchange has completed (later ones are renegotiations).
    public var hasNegotiated: Bool { established }

    // MARK: Offer and answer

    /// Gathers (the first time), then writes our offer (also our local description) as SDP text:
    /// one section per transceiver, those already negotiated in their order, new ones after.
    public func createOffer() async throws(PeerConnectionError) -> String {
        try requireOpen()
        guard case .stable = signaling else {
            throw .wrongState("an offer is made only when no other exchange is under way")
        }
        guard !transceivers.isEmpty else { throw .wrongState("add a transceiver before creating an offer") }
        let credentials = try await startTransport(role: .controlling)
        let local = try await localTransport(credentials, setup: .actpass)
        var sections: [MediaDescription] = []
        var streams: [String] = []
        var placed: Set<Int> = []
        var usedMids = Set(transceivers.compactMap(\.mid))
        for existing in localDescription?.media ?? [] {
            guard let mid = existing.mid, let transceiver = transceivers.first(where: { $0.mid == mid }) else {
                sections.append(
                    MediaDescription(
                        kind: existing.kind, port: 0, proto: existing.proto, formats: existing.formats,
                        connection: .unspecified, mid: existing.mid))
                continue
            }
            placed.insert(transceiver.index)
            sections.append(
                offerSection(transceiver, mid: mid, local: local, first: sections.isEmpty, streams: &streams))
        }
        for transceiver in transceivers where !placed.contains(transceiver.index) {
            let mid = JSEPSession.mid(existing: transceiver.mid, index: sections.count, used: &usedMids)
            transceiver.setMid(mid)
            sections.append(
                offerSection(transceiver, mid: mid, local: local, first: sections.isEmpty, streams: &streams))
        }
        let offer = SessionDescription(
            origin: nextOrigin(), groups: [.bundle(sections.filter { !$0.isRejected }.compactMap(\.mid))],
            msidSemantic: MSIDSemantic(identifiers: streams), media: sections)
        signaling = .haveLocalOffer(offer)
        if weOffered == nil { weOffered = true }
        return offer.serialize()
    }

    /// One section of our offer for `transceiver` (the first of the bundle carries the candidates).
    ///
    /// In a renegotiation the codecs, payload types and header-extension ids already settled are
    /// kept: a section negotiated before offers what it settled, and a new section offers what
    /// a settled section of its kind uses, so no payload type or extension id ever means two
    /// things within the bundle (a peer that offered first numbers them its own way).
    func offerSection(
        _ transceiver: Transceiver, mid: String, local: LocalTransport, first: Bool,
        streams: inout [String]
    ) -> MediaDescription {
        let video = transceiver.kind == .video
        let settled = JSEPSession.settled(mid: mid, kind: transceiver.kind.mediaKind, in: localDescription)
        let builder = OfferBuilder(
            capabilities: configuration.capabilities, transport: local, origin: Self.origin(),
            video: video ? transceiver.direction : nil, audio: video ? nil : transceiver.direction,
            videoTrack: video ? track(transceiver) : nil, audioTrack: video ? nil : track(transceiver))
        guard var section = builder.offer().media.first else {
            return MediaDescription(
                kind: transceiver.kind.mediaKind, port: 0, formats: ["0"], connection: .unspecified, mid: mid)
        }
        section.mid = mid
        if let settled {
            JSEPSession.keepSettled(&section, from: settled, ssrc: transceiver.localSSRC)
        } else {
            // Extension ids the bundle already uses win over our defaults.
            section.extensions = JSEPSession.agreeingExtensions(
                section.extensions, bundle: (localDescription?.media ?? []).flatMap(\.extensions))
        }
        if !first { Self.dropCandidates(&section) }
        if transceiver.direction.sends, !streams.contains(configuration.streamID) {
            streams.append(configuration.streamID)
        }
        return section
    }

    static func dropCandidates(_ section: inout MediaDescription) {
        section.candidates = []
        section.endOfCandidates = false
        section.port = 9
        section.connection = .unspecified
    }

    /// Gathers (the first time), then answers the remote offer (also our local description) as
    /// SDP text, and starts connecting (the first time) or applies what changed.
    public func createAnswer() async throws(PeerConnectionError) -> String {
        try requireOpen()
        guard case .haveRemoteOffer(let offer) = signaling else {
            throw .wrongState("an answer needs the peer's offer first (setRemoteDescription(offer, type: .offer))")
        }
        let credentials = try await startTransport(role: .controlled)
        let setup: DTLSSetup
        if let role = dtlsRole {
            setup = role == .client ? .active : .passive  // a renegotiation keeps the roles
        } else {
            let first = offer.media.first { !$0.isRejected }
            setup = DTLSSetup.answering(first.map { offer.transport(for: $0).setup ?? .actpass } ?? .actpass)
        }
        let local = try await localTransport(credentials, setup: setup)
        var sections: [MediaDescription] = []
        var streams: [String] = []
        var carried = false
        let bundle = offer.bundleGroup
        for offered in offer.media {
            let transceiver = offered.mid.flatMap { mid in transceivers.first { $0.mid == mid } }
            let video = offered.kind == .video
            let builder = AnswerBuilder(
                capabilities: configuration.capabilities, transport: local, origin: Self.origin(),
                video: video ? transceiver?.direction : nil, audio: video ? nil : transceiver?.direction,
                videoTrack: video ? transceiver.flatMap { track($0) } : nil,
                audioTrack: video ? nil : transceiver.flatMap { track($0) })
            let single = SessionDescription(
                origin: offer.origin, groups: bundle == nil ? [] : [.bundle(offered.mid.map { [$0] } ?? [])],
                media: [offered])
            guard var section = builder.answer(to: single).media.first else { continue }
            if !section.isRejected {
                if carried { Self.dropCandidates(&section) }
                carried = true
                if section.direction?.sends == true, !streams.contains(configuration.streamID) {
                    streams.append(configuration.streamID)
                }
            }
            sections.append(section)
        }
        let answer = SessionDescription(
            origin: nextOrigin(),
            groups: bundle == nil ? [] : [.bundle(sections.filter { !$0.isRejected }.compactMap(\.mid))],
            msidSemantic: MSIDSemantic(identifiers: streams), media: sections)
        let negotiation: SessionNegotiation
        do {
            negotiation = try SessionNegotiation.read(answer: answer, offer: offer, weOffered: false)
        } catch {
            throw .unusableDescription("cannot answer the offer: \(error)")
        }
        localDescription = answer
        remoteDescription = offer
        signaling = .stable
        try await settle(negotiation)
        return answer.serialize()
    }

    /// Forgets our pending offer (glare: the peer's offer wins). Transceivers it gave a mid to
    /// for the first time lose that mid again.
    public func rollback() {
        guard case .haveLocalOffer = signaling else { return }
        signaling = .stable
        for transceiver in transceivers where transceiver.negotiated == nil { transceiver.setMid(nil) }
    }

    /// The peer's offer or answer. Text that is not SDP, or SDP we cannot use (no ICE credentials,
    /// no fingerprint, no codec of ours), is refused with the reason; the state does not change.
    public func setRemoteDescription(_ sdp: String, type: DescriptionType) async throws(PeerConnectionError) {
        try requireOpen()
        let description: SessionDescription
        do {
            description = try SessionDescription.parse(sdp)
        } catch {
            throw .notSDP("\(error)")
        }
        switch type {
        case .answer:
            guard case .haveLocalOffer(let offer) = signaling else {
                throw .wrongState("an answer needs our offer first (createOffer)")
            }
            let negotiation: SessionNegotiation
            do {
                negotiation = try SessionNegotiation.read(answer: description, offer: offer, weOffered: true)
            } catch {
                throw .unusableDescription("\(error)")
            }
            localDescription = offer
            remoteDescription = description
            signaling = .stable
            try await settle(negotiation)
        case .offer:
            guard case .stable = signaling else {
                throw .wrongState("an offer arrived while ours waits for its answer (roll back first)")
            }
            let transport: SessionNegotiation.RemoteTransport
            do {
                transport = try SessionNegotiation.remoteTransport(description, remoteIsAnswer: false)
            } catch {
                throw .unusableDescription("\(error)")
            }
            if established, let current = remoteICE, current != transport.iceUfrag {
                throw .unusableDescription(
                    "the offer restarts ICE (new ufrag), which sharectl does not do within a call")
            }
            // JSEP §5.10: each offered section goes to the transceiver with its mid, else to one
            // of its kind that has no mid yet, else to a new receive-only one. Sections past the
            // limit get none, so the answer rejects them (no transceiver, no decoder thread).
            let admitted = configuration.sectionLimit.admitted(description)
            for (section, admitted) in zip(description.media, admitted) where !section.isRejected && admitted {
                let kind: Transceiver.Kind? = section.kind == .video ? .video : section.kind == .audio ? .audio : nil
                guard let kind, let mid = section.mid else { continue }
                if transceivers.contains(where: { $0.mid == mid }) { continue }
                // A section the peer only sends on does not take one of ours that only sends.
                let peerReceives = description.direction(of: section).receives
                let transceiver =
                    transceivers.first { $0.kind == kind && $0.mid == nil && (peerReceives || $0.direction.receives) }
                    ?? {
                        let made = Transceiver(
                            index: transceivers.count, kind: kind, direction: .recvonly,
                            trackID: kind == .video ? "video\(transceivers.count)" : nil)
                        transceivers.append(made)
                        return made
                    }()
                transceiver.setMid(mid)
            }
            signaling = .haveRemoteOffer(description)
            if weOffered == nil { weOffered = false }
            if !established {
                _ = try await startTransport(role: .controlled)
                try await setRemoteICE(transport)
                remoteICE = transport.iceUfrag
            }
        }
    }

    /// Applies a completed exchange: the first connects, later ones update the media.
    func settle(_ negotiation: SessionNegotiation) async throws(PeerConnectionError) {
        if !established {
            if remoteICE == nil {
                try await setRemoteICE(negotiation.transport)
                remoteICE = negotiation.transport.iceUfrag
            }
            dtlsRole = negotiation.transport.dtlsRole
            established = true
            try apply(negotiation, connecting: negotiation.transport)
        } else {
            try apply(negotiation, connecting: nil)
        }
    }

    func nextOrigin() -> Origin {
        sessionVersion += 1
        return Origin(sessionID: sessionID, sessionVersion: sessionVersion)
    }

    /// One trickled candidate of the peer (`candidate:…` or `a=candidate:…`). Before the peer's
    /// description it is kept (the first `EarlyCandidates.limit`; later ones are dropped with one
    /// warning) and applied once when the description comes.
    public func addRemoteCandidate(_ line: String) async throws(PeerConnectionError) {
        try requireOpen()
        guard remoteICE != nil, let leg else {
            if earlyCandidates.add(line) == .firstDropped {
                logger.warning(
                    "the peer sent more than \(EarlyCandidates.limit) candidates before its description; dropping the rest"
                )
            }
            return
        }
        do {
            try await leg.transport.ice.addRemoteCandidate(line)
        } catch {
            throw .unusableDescription("\(error)")
        }
    }

    /// The peer has sent all its candidates (before its description: noted, and applied with it).
    public func endOfRemoteCandidates() async throws(PeerConnectionError) {
        try requireOpen()
        guard remoteICE != nil, let leg else {
            earlyCandidates.end()
            return
        }
        do {
            try await leg.transport.ice.endOfRemoteCandidates()
        } catch {
            throw .localFailure("\(error)")
        }
    }

    /// Returns once connected; throws the reason when the connection failed or was closed.
    public nonisolated func waitUntilConnected() async throws(PeerConnectionError) {
        do {
            try await stateBox.wait()
        } catch let error as PeerConnectionError {
            throw error
        } catch {
            throw .connectionFailed("\(error)")
        }
    }

    // MARK: Media

    /// Sends `source` on a negotiated video transceiver that sends: its frames are converted,
    /// scaled (long side at most `maxLongSide`), encoded with the negotiated codec on an encoder
    /// thread, packetized and sent. The source starts when the connection is up.
    public func attachVideoSource(
        _ source: any VideoFrameSource, to transceiver: Transceiver, bitrate: Int = 2_500_000,
        framesPerSecond: Int = 30, maxLongSide: Int = 1920, policy: ScreenSendPolicy = .balanced,
        content: VideoContent = .screen,
        hardwareEncoder: LibavH264Encoder.Backend? = nil,
        keyframeIntervalMicros: Int64? = VideoEncodingThread.Settings.defaultKeyframeIntervalMicros
    ) throws(PeerConnectionError) {
        guard let media = transceiver.media, let codec = media.negotiated.videoCodec else {
            throw .notSending("the \(transceiver.kind) transceiver was not negotiated to send video")
        }
        let factory = VideoEncoderFactory(
            codec: codec, frameRate: framesPerSecond, content: content,
            hardware: codec == .h264 ? hardwareEncoder : nil)
        try media.attachVideo(
            source,
            settings: .init(
                factory: factory, bitrate: bitrate, maxLongSide: maxLongSide,
                policy: policy, keyframeIntervalMicros: keyframeIntervalMicros))
    }

    /// Sends the screen on a negotiated video transceiver from a mesh's shared layer encoders
    /// (`SharedLayerEncoders`, of the section's codec): the layer this connection's estimate
    /// carries goes out on the section's own stream. Starts when the connection is up.
    /// `ownEncoder` (a rebuild for this person): an encoder of its own first, for
    /// `SharedLayerEncoders.dedicatedMicros`, then its layer.
    package func attachSharedVideo(_ encoders: SharedLayerEncoders, to transceiver: Transceiver, ownEncoder: Bool)
        throws(PeerConnectionError)
    {
        guard let media = transceiver.media else {
            throw .notSending("the \(transceiver.kind) transceiver was not negotiated to send video")
        }
        try media.attachShared(encoders, ownEncoder: ownEncoder)
    }

    /// Changes the send policy of a sending video transceiver from its next frame; nothing is
    /// renegotiated.
    public func setPolicy(_ policy: ScreenSendPolicy, on transceiver: Transceiver) {
        for encoder in transceiver.media?.encoders ?? [] { encoder.setPolicy(policy) }
    }

    /// New limits for a sending video transceiver's encoder from its next frame: a camera capped
    /// beside a shared screen (`CameraCap`), or given its defaults back. Nothing is renegotiated.
    /// Nonisolated (the transceiver's media is thread-safe): a capture thread may call it before
    /// handing on the frame that needs the new limits.
    public nonisolated func setVideoLimits(maxBitrate: Int, maxLongSide: Int, on transceiver: Transceiver) {
        transceiver.media?.setVideoLimits(maxBitrate: maxBitrate, maxLongSide: maxLongSide)
    }

    /// Sends the synthetic tone (`toneLevelDbfs`, or digital silence with nil) as Opus on a
    /// negotiated audio transceiver that sends. Starts when the connection is up.
    public func attachAudioTone(
        to transceiver: Transceiver, toneLevelDbfs: Double? = -20, bitrate: Int? = nil
    ) throws(PeerConnectionError) {
        guard let media = transceiver.media else {
            throw .notSending("the \(transceiver.kind) transceiver was not negotiated to send audio")
        }
        do {
            try media.attachAudio(source: SyntheticAudioSource(levelDbfs: toneLevelDbfs), bitrate: bitrate)
        } catch let error as PeerConnectionError {
            throw error
        } catch {
            throw .localFailure("audio: \(error)")
        }
    }

    /// Sends the frames of an audio source (a microphone) as Opus on a negotiated audio transceiver
    /// that sends. Starts when the connection is up.
    public func attachAudio(
        _ source: any AudioFrameSource, to transceiver: Transceiver, bitrate: Int? = nil
    ) throws(PeerConnectionError) {
        guard let media = transceiver.media else {
            throw .notSending("the \(transceiver.kind) transceiver was not negotiated to send audio")
        }
        do {
            try media.attachAudio(source: source, bitrate: bitrate)
        } catch let error as PeerConnectionError {
            throw error
        } catch {
            throw .localFailure("audio: \(error)")
        }
    }

    /// True when a source (video) or the tone (audio) is attached to the transceiver's current media.
    public func isSending(on transceiver: Transceiver) -> Bool {
        guard let media = transceiver.media else { return false }
        return media.encoder != nil || media.audioSender != nil
    }

    /// The encoder side says whether the CPU (not the link) is what holds the send rate down; the
    /// congestion figures then give `limitedBy == .cpu`.
    public func setLimitedByCPU(_ limited: Bool) {
        leg?.congestion.setLimitedByCPU(limited)
    }

    /// Asks the encoder of a sending video transceiver for a keyframe (the watchdog's first rung).
    public func requestKeyframe(on transceiver: Transceiver) {
        for encoder in transceiver.media?.encoders ?? [] { encoder.requestKeyframe() }
    }

    // MARK: Close

    /// Stops media (sources, encoders, decoders), closes DTLS and ICE; the state becomes closed.
    public func close() async {
        guard !closed else { return }
        closed = true
        // Closed first: DTLS saying goodbye below must not read as the peer's failure.
        stateBox.set(.closed)
        connectTask?.cancel()
        for transceiver in transceivers { transceiver.media?.stop() }
        leg?.stop()
        await leg?.transport.close()
        gatherTask?.cancel()
        candidateContinuation.finish()
    }

    // MARK: Internals

    func requireOpen() throws(PeerConnectionError) {
        if closed { throw .wrongState("the peer connection is closed") }
    }

    func track(_ transceiver: Transceiver) -> LocalTrack? {
        guard transceiver.direction.sends else { return nil }
        return LocalTrack(
            streamID: configuration.streamID, trackID: transceiver.trackID,
            ssrc: transceiver.localSSRC, rtxSSRC: transceiver.localRTXSSRC, cname: configuration.cname,
            rids: transceiver.simulcastRIDs)
    }

    static func origin() -> Origin {
        Origin(sessionID: String(UInt64.random(in: 1...UInt64(Int64.max))), sessionVersion: 2)
    }

}
