import Foundation
import GLibLoop
import SDPWire
import ShareCore
import VideoSend
import WebRTCTransport

/// The transport under the connection: ICE started and gathered, the remote ICE applied, and the
/// negotiated media carried out on the call leg.
extension PeerConnection {
    /// Makes the transport (ICE agent with `role`, DTLS, SRTP) and starts gathering, once.
    func startTransport(role: ICEAgent.Configuration.Role) async throws(PeerConnectionError) -> ICEAgent.Credentials {
        if let credentials { return credentials }
        var ice = configuration.ice
        ice.role = role
        let transport = SecureTransport(loop: loop, ice: ice, certificate: certificate, logger: logger)
        let leg = CallLegMedia(transport: transport, loop: loop, cname: configuration.cname, logger: logger)
        let stateBox = self.stateBox
        // Weak: the leg owns the transport, and a strong leg here would keep both (and the ICE agent,
        // DTLS and libnice under them) alive after the connection is gone.
        transport.setHandlers(rtp: { [weak leg] in leg?.receiveRTP($0) }, rtcp: { [weak leg] in leg?.receiveRTCP($0) })
        {
            state in
            switch state {
            case .connected, .failed: stateBox.set(state)
            case .new, .connecting, .closed: break
            }
        }
        self.leg = leg
        let credentials: ICEAgent.Credentials
        do {
            credentials = try await transport.startICE()
        } catch {
            stateBox.set(.failed("ICE could not start: \(error)"))
            throw .localFailure("ICE could not start: \(error)")
        }
        self.credentials = credentials
        let gathered = self.gathered, gatheringDone = self.gatheringDone, continuation = candidateContinuation
        gatherTask = Task {
            for await event in transport.ice.localCandidates {
                switch event.kind {
                case .candidate(let line): gathered.withLock { $0.append(line) }
                case .endOfCandidates: gatheringDone.open()
                }
                continuation.yield(event)
            }
        }
        return credentials
    }

    /// Our ICE and DTLS lines, after gathering has finished (or its time ran out).
    func localTransport(_ credentials: ICEAgent.Credentials, setup: DTLSSetup) async throws(PeerConnectionError)
        -> LocalTransport
    {
        _ = await gatheringDone.wait(upTo: configuration.gatheringTimeout)
        let lines = gathered.withLock { $0 }
        logger.info("ICE gathered \(lines.count) candidates")
        let fingerprint = SDPWire.Fingerprint(
            algorithm: certificate.fingerprint.algorithm.rawValue, bytes: certificate.fingerprint.digest)
        return LocalTransport(
            iceUfrag: credentials.ufrag, icePwd: credentials.pwd, iceOptions: configuration.iceOptions,
            fingerprint: fingerprint,
            setup: setup, candidates: lines.compactMap { try? ICECandidate(parsing: $0) },
            endOfCandidates: true)
    }

    func setRemoteICE(_ remote: SessionNegotiation.RemoteTransport) async throws(PeerConnectionError) {
        guard let ice = leg?.transport.ice else { throw .wrongState("no transport") }
        do {
            try await ice.setRemoteCredentials(ufrag: remote.iceUfrag, pwd: remote.icePwd)
        } catch {
            throw .unusableDescription("the peer's ICE credentials were refused: \(error)")
        }
        var added = 0
        for candidate in remote.candidates {
            do { try await ice.addRemoteCandidate(candidate); added += 1 } catch {
                logger.warning("skipping a remote candidate: \(error)")
            }
        }
        let early = earlyCandidates.take()
        for candidate in early.lines where !remote.candidates.contains(candidate) {
            do { try await ice.addRemoteCandidate(candidate); added += 1 } catch {
                logger.warning("skipping a remote candidate that came before the description: \(error)")
            }
        }
        let ended = remote.endOfCandidates || early.endOfCandidates
        if ended { try? await ice.endOfRemoteCandidates() }
        logger.info(
            "remote description: \(added) candidates\(ended ? ", end of candidates" : ""), DTLS \(remote.dtlsRole)")
    }

    /// Makes each negotiated transceiver's media (keeping what an earlier exchange made when it
    /// is unchanged), routes incoming RTP to them, and connects after the first exchange.
    func apply(_ negotiation: SessionNegotiation, connecting remote: SessionNegotiation.RemoteTransport?)
        throws(PeerConnectionError)
    {
        guard let leg else { throw .wrongState("no transport") }
        var entries: [RTPRouter.Entry] = []
        var midExtension: UInt8?
        let connected = stateBox.state == .connected
        for transceiver in transceivers {
            guard let mid = transceiver.mid else { continue }
            let previous = transceiver.media
            guard let settled = negotiation.media[mid], settled.kind == transceiver.kind.mediaKind else {
                transceiver.retire(previous)
                transceiver.setNegotiated(
                    .init(mid: mid, direction: .inactive, extensions: HeaderExtensionIDs(), feedback: []),
                    media: nil)
                continue
            }
            var media: TransceiverMedia?
            if let previous, Self.sameMedia(previous.negotiated, settled) {
                media = previous
            } else {
                transceiver.retire(previous)
                if settled.direction != .inactive {
                    do {
                        media = try TransceiverMedia(
                            negotiated: settled, kind: transceiver.kind, localSSRC: transceiver.localSSRC,
                            localRTXSSRC: transceiver.localRTXSSRC,
                            continuing: transceiver.continuedSequences, writer: leg.congestion.writer,
                            logger: logger)
                    } catch {
                        throw .localFailure("the \(transceiver.kind) media could not start: \(error)")
                    }
                    if connected { media?.startSending() }
                }
            }
            let sends = settled.direction.sends
            transceiver.setNegotiated(
                .init(
                    mid: mid, direction: settled.direction, codec: settled.codec, payloadType: settled.payloadType,
                    rtxPayloadType: settled.rtxPayloadType, extensions: settled.extensions, feedback: settled.feedback,
                    sendSSRC: sends ? transceiver.localSSRC : nil,
                    sendRTXSSRC: sends && settled.rtxPayloadType != nil ? transceiver.localRTXSSRC : nil,
                    remoteSSRC: settled.remoteSSRC, remoteRTXSSRC: settled.remoteRTXSSRC,
                    simulcastRIDs: sends ? settled.simulcastRIDs : []),
                media: media)
            if sends, transceiver.simulcastRIDs.count > 1, settled.simulcastRIDs.isEmpty {
                logger.notice(
                    "the answer did not take simulcast for mid \(mid): one stream goes out, not \(transceiver.simulcastRIDs.count) layers",
                    ["rtp.mid": mid])
            }
            midExtension = midExtension ?? settled.extensions.mid
            if settled.direction.receives {
                entries.append(
                    .init(
                        index: transceiver.index, mid: mid, payloadType: settled.payloadType,
                        rtxPayloadType: settled.rtxPayloadType, ssrc: settled.remoteSSRC,
                        rtxSSRC: settled.remoteRTXSSRC))
            }
            logger.info("negotiated \(transceiver)", ["rtp.mid": mid])
        }
        let stateBox = self.stateBox
        leg.configure(transceivers: transceivers, router: RTPRouter(entries: entries, midExtensionID: midExtension)) {
            reason in
            stateBox.set(.failed("ICE: \(reason)"))
        }
        if let remote { connect(leg: leg, remote: remote) }
    }

    /// True when a renegotiated section needs no new media: same direction, codec, payload types
    /// and extension ids.
    static func sameMedia(_ a: SessionNegotiation.Media, _ b: SessionNegotiation.Media) -> Bool {
        a.direction == b.direction && a.codec == b.codec && a.payloadType == b.payloadType
            && a.rtxPayloadType == b.rtxPayloadType && a.extensions == b.extensions
            && a.simulcastRIDs == b.simulcastRIDs
            && (a.remoteSSRC == b.remoteSSRC || a.remoteSSRC == nil || b.remoteSSRC == nil)
    }

    func connect(leg: CallLegMedia, remote: SessionNegotiation.RemoteTransport) {
        stateBox.set(.connecting)
        let transport = leg.transport, timeout = configuration.connectTimeout, logger = self.logger
        let stateBox = self.stateBox
        connectTask = Task {
            do {
                try await transport.connect(
                    role: remote.dtlsRole, remoteFingerprints: remote.fingerprints, timeout: timeout)
                logger.notice(
                    "connected: \(transport.ice.selectedPair?.description ?? "?"), SRTP \(transport.srtpProfile?.rawValue ?? "?")"
                )
                // What the exchanges made by now (a renegotiation may have come meanwhile).
                for media in self.transceivers.compactMap(\.media) { media.startSending() }
                stateBox.set(.connected)
            } catch TransportError.failed(let reason) {
                stateBox.set(.failed(reason.hasPrefix("failed: ") ? String(reason.dropFirst(8)) : reason))
            } catch {
                stateBox.set(.failed("\(error)"))
            }
        }
    }
}
