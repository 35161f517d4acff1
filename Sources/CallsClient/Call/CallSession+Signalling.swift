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

/// The room socket, its messages, and the participants they make and remove.
extension CallSession {
    // MARK: Signalling socket

    /// Connects a socket; the job queue installs it (so no job waits on a connect).
    func openSocket() async throws {
        let socket = try await RoomSocket.connect(loop: loop, url: socketURL, logger: logger)
        enqueue(.opened(socket))
    }

    func install(_ socket: RoomSocket) {
        guard !stopping, !signallingUp else {
            socket.close()
            return
        }
        socketGeneration += 1
        let generation = socketGeneration
        self.socket = socket
        signallingUp = true
        if let since = signallingDownSince {
            // The figure `ReconnectRule` judged by: "Reconnecting…" only when this reaches 4 s.
            let seconds = String(format: "%.2f", since.duration(to: .now).inSeconds)
            logger.notice("signalling: connected again after \(seconds) s")
        }
        signallingDownSince = nil
        retry.succeeded()
        socket.send(RoomMessage.join(name: options.name, resume: resumeKey).text)
        spawn { [weak self] in
            for await event in socket.events {
                guard let self else { return }
                await self.enqueue(.socket(event, generation: generation))
            }
        }
    }

    func send(_ message: RoomMessage) {
        if signallingUp, myID != nil, let socket {
            socket.send(message.text)
        } else if case .media = message {
            // Reports are not worth keeping for later.
        } else {
            outbox.append(message)
        }
    }

    func signallingLost(_ reason: String) async {
        guard signallingUp else { return }
        signallingUp = false
        socket = nil
        signallingDownSince = .now
        logger.notice("signalling lost (\(reason)); reconnecting with the resume key")
        await watch.signalling(up: false, now: .now)
        scheduleReconnect(after: .milliseconds(250))
    }

    func scheduleReconnect(after delay: Duration) {
        guard !reconnecting, !stopping else { return }
        reconnecting = true
        spawn { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.enqueue(.reconnect)
        }
    }

    /// One attempt, off the job queue; a failed one tries again as `SignallingRetry` says.
    func reconnect() {
        reconnecting = false
        guard !signallingUp, !stopping else { return }
        reconnecting = true
        spawn { [weak self] in
            guard let self else { return }
            do {
                try await self.openSocket()
                await self.attemptEnded(failure: nil)
            } catch {
                await self.attemptEnded(failure: "\(error)")
            }
        }
    }

    func attemptEnded(failure: String?) {
        reconnecting = false
        guard let failure else { return }
        let wait = retry.failed(downFor: signallingDownSince.map { $0.duration(to: .now) } ?? .zero)
        logger.info("signalling: \(failure); again in \(wait.inSeconds) s")
        scheduleReconnect(after: wait)
    }

    // MARK: Messages

    func received(_ text: String) async {
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
            if myID == nil {
                errors.append("\(code): \(text)")
                answered.open()
            }
        case .join, .leave: break
        }
    }

    func welcome(id: String, resume: String, peers: [RoomMessage.Peer]) async {
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
        answered.open()
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

    func participant(_ id: String, name: String) async -> Participant? {
        if let existing = participants[id] {
            existing.name = name
            return existing
        }
        var configuration = PeerConnection.Configuration(loopbackOnly: options.loopbackOnly)
        if let codec = options.codec { configuration.capabilities.videoCodecs = [codec == .h264 ? .h264 : .vp8] }
        if !options.transportFeedback {
            configuration.capabilities.videoFeedback.removeAll { $0 == .transportCC }
            configuration.capabilities.audioFeedback.removeAll { $0 == .transportCC }
            configuration.capabilities.headerExtensions.removeAll { $0 == ExtensionMap.transportWideCC }
        }
        configuration.streamID = "sharectl-\(options.name.filter { $0.isLetter || $0.isNumber })"
        let connection: PeerConnection
        let audio: Transceiver, camera: Transceiver
        do {
            connection = try PeerConnection(loop: loop, configuration: configuration, logger: logger.child(id))
            audio = try await connection.addTransceiver(
                kind: .audio, direction: options.audio == .none ? .recvonly : .sendrecv)
            camera = try await connection.addTransceiver(
                kind: .video, direction: sendsCamera ? .sendrecv : .recvonly,
                trackID: "camera")
        } catch {
            logger.error("no connection to \(name): \(error)")
            return nil
        }
        let participant = Participant(id: id, name: name, connection: connection, audio: audio, camera: camera)
        participants[id] = participant
        order.append(id)
        audioPaths.joined(id, now: .now)
        if sharing {
            participant.screen = try? await connection.addTransceiver(
                kind: .video, direction: .sendonly, trackID: "screen")
        }
        return participant
    }

    func remove(_ id: String) async {
        guard let participant = participants.removeValue(forKey: id) else { return }
        order.removeAll { $0 == id }
        audioPaths.left(id)
        departed[id] = participant.name
        logger.notice("\(participant.name) left")
        await participant.connection.stopSending()
        await participant.connection.close()
    }

    /// A failed connection is made again from nothing (new ICE agent, new DTLS), as for someone
    /// who just joined: what they were (name, sharing, a decoder fault in force) carries over.
    /// With `offer`, ours is offered at once; else an offer of theirs is about to be answered.
    func renew(_ old: Participant, reason: String, offer: Bool) async -> Participant? {
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
    func renewFailedConnections(now: ContinuousClock.Instant) async {
        for id in order {
            guard let participant = participants[id], let since = participant.failedSince,
                rules.renewalDue(
                    with: id, failedSince: since, renewals: participant.renewals,
                    signallingUp: signallingUp, now: now)
            else { continue }
            let why: String
            if case .failed(let reason) = participant.connection.state { why = reason } else { why = "failed" }
            _ = await renew(
                participant, reason: "the connection to \(participant.name) failed (\(why)); connecting again",
                offer: true)
        }
    }
}
