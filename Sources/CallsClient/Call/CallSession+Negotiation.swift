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

/// Offers and answers, the media attached once a section sends, and sharing on and off.
extension CallSession {
    // MARK: Offer and answer

    /// Sends an offer to `participant`, or remembers to once the exchange under way ends.
    func negotiate(_ participant: Participant) async {
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

    func handle(_ signal: RoomMessage.Signal) async {
        // A Janus room's request to subscribe afresh: a mesh has no subscriptions.
        guard signal.kind != .restart else { return }
        var known = participants[signal.peer]
        if let old = known, signal.kind == .offer,
            RoomCallRules.comesFromNewConnection(
                offered: RoomCallRules.fingerprints(in: signal.sdp ?? ""),
                known: old.remoteFingerprints)
        {
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
        case .restart:
            return
        }
        let screenWanted = await needsScreenOffer(participant)
        if participant.needsOffer || screenWanted { await negotiate(participant) }
    }

    /// Our screen section is wanted but not yet offered or not yet in the state we want.
    func needsScreenOffer(_ participant: Participant) async -> Bool {
        guard let screen = participant.screen else { return false }
        return RoomCallRules.screenNeedsOffer(wanted: screen.direction, negotiated: screen.negotiated?.direction)
    }

    /// Attaches what we send to sections newly negotiated to send: the tone, the camera, the screen.
    func attachMedia(_ participant: Participant) async {
        let pc = participant.connection
        do {
            if options.audio != .none, participant.audio.negotiated?.direction.sends == true,
                await !pc.isSending(on: participant.audio)
            {
                if case .microphone(let node) = options.audio {
                    try await pc.attachAudio(
                        MicrophoneSource(node: node, logger: logger), to: participant.audio,
                        bitrate: options.audioBitrate)
                } else {
                    try await pc.attachAudioTone(
                        to: participant.audio, toneLevelDbfs: options.audio == .silence ? nil : -20,
                        bitrate: options.audioBitrate)
                }
            }
            if sendsCamera, participant.camera.negotiated?.direction.sends == true,
                await !pc.isSending(on: participant.camera)
            {
                // The director's camera (30 fps at most), or the synthetic pattern (15 fps, 500 kbit/s, 640 wide).
                let source =
                    cameraFanOut?.branch() ?? SyntheticScreenSource(width: 640, height: 360, framesPerSecond: 15)
                let defaults =
                    cameraFanOut != nil
                    ? CappedCamera.Defaults() : CappedCamera.Defaults(bitrate: 500_000, longSide: 640)
                let camera = CappedCamera(
                    source, connection: pc, transceiver: participant.camera, defaults: defaults,
                    besideScreen: sharing)
                try await pc.attachVideoSource(
                    camera, to: participant.camera, bitrate: defaults.bitrate,
                    framesPerSecond: cameraFanOut != nil ? 30 : 15, maxLongSide: defaults.longSide,
                    content: .camera)
                participant.cameraSent = camera
            }
            if let screen = participant.screen, screen.negotiated?.direction.sends == true,
                await !pc.isSending(on: screen)
            {
                let fanout = startScreen()
                if options.sharedLayers, let codec = screen.media?.videoCodec {
                    try await pc.attachSharedVideo(
                        sharedEncoders(codec, fanout), to: screen, ownEncoder: participant.ownEncoderNext)
                    participant.ownEncoderNext = false
                } else {
                    try await pc.attachVideoSource(
                        fanout.branch(), to: screen, bitrate: options.screenBitrate,
                        framesPerSecond: options.framesPerSecond, maxLongSide: 1920, policy: screenPolicy)
                }
                participant.screenSince = .now
            }
        } catch {
            logger.warning("could not send to \(participant.name): \(error)")
        }
    }

    // MARK: Sharing

    func changeSharing(_ on: Bool) async {
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
                    participant.screen = try? await participant.connection.addTransceiver(
                        kind: .video, direction: .sendonly,
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

    func announceShare(mid: String?) {
        shareAnnounced = true
        sharesSent += 1
        send(.share(from: nil, on: true, mid: mid))
    }
}
