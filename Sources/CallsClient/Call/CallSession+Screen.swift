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

/// The shared screen, its watchdog, and the fault drills.
extension CallSession {
    // MARK: The screen and its watchdog

    /// The capture (started once for every connection) and the watchdog, while sharing.
    @discardableResult
    func startScreen() -> FrameFanOut<SupervisedSource> {
        // One capture for every connection, running as long as the share: encoders' branches come
        // and go without stopping it.
        let fanout =
            self.fanout
            ?? FrameFanOut(
                SupervisedSource(
                    options.screenSource
                        ?? SyntheticScreenSource(
                            width: options.screenWidth, height: options.screenHeight,
                            framesPerSecond: options.framesPerSecond)),
                running: .betweenStartAndStop)
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

    /// The shared layer encoders of `codec` (`Options.sharedLayers`), made with the first
    /// connection that negotiated it.
    func sharedEncoders(_ codec: VideoCodec, _ fanout: FrameFanOut<SupervisedSource>) -> SharedLayerEncoders {
        if let existing = sharedEncoders[codec] { return existing }
        let made = SharedLayerEncoders(
            codec: codec, source: fanout.branch(), maxBitrate: options.screenBitrate,
            framesPerSecond: options.framesPerSecond, maxLongSide: 1920, policy: screenPolicy, logger: logger)
        sharedEncoders[codec] = made
        return made
    }

    func stopScreen() {
        for encoders in sharedEncoders.values { encoders.stop() }
        sharedEncoders = [:]
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
                let encoder = screen.media?.encoder
            else { continue }
            let figures = await participant.connection.statistics()
            let sent = figures.transceivers.first { $0.mid == screen.mid }?.sent
            let congestion = figures.congestion
            let linkLimited =
                (congestion?.pacedQueueMillis ?? 0) > 250 || (congestion.map { $0.targetBitrate <= 150_000 } ?? false)
            let theirs = participant.theirReport?.screens.first { $0.from == myID }
            people.append(
                .init(
                    id: id, name: participant.name, framesIn: encoder.counters.framesIn,
                    framesEncoded: sent?.framesEncoded ?? 0, framesSent: sent?.framesSent ?? 0,
                    keyframesSent: sent?.keyframesEncoded ?? 0, linkLimited: linkLimited,
                    sendingFor: now - since, reportsStalled: theirs?.screenStalled,
                    reportsDecoded: theirs?.framesDecoded))
        }
        return CallWatchdogFigures(captureFrames: fanout?.source.frameCount, people: people)
    }

    /// Carries out one watchdog step. A keyframe or a fresh encoder touches one encoder at once; a
    /// rebuild or a share again renegotiates, so it joins the job queue behind any exchange under way.
    public func watchdogCarryOut(_ command: CallWatchdogCommand) async throws {
        switch command {
        case .restartCapture:
            guard let fanout else { throw Failure(description: "no capture is running") }
            fanout.source.restart()
            senderFaults.removeAll { $0 == "capture-stall" }
        case .keyframe(let id):
            guard let participant = participants[id], let screen = participant.screen else {
                throw Failure(description: "no screen goes to \(id)")
            }
            await participant.connection.requestKeyframe(on: screen)
        case .freshEncoder(let id, let scale, let seconds):
            // With shared layer encoders: the layer's (everyone on it is fed by the one that
            // stalled), or the person's own encoder after a rebuild.
            guard let encoder = participants[id]?.screen?.media?.encoder else {
                throw Failure(description: "no screen encoder for \(id)")
            }
            encoder.rebuildEncoder(scale: scale, forSeconds: seconds)
            if !anyEncoderStalled { senderFaults.removeAll { $0 == "encoder-stall" } }
        case .rebuild(let id):
            guard sharing, participants[id]?.screen != nil else {
                throw Failure(description: "no screen goes to \(id)")
            }
            enqueue(.watchdog(command))
        case .shareAgain:
            guard sharing else { throw Failure(description: "the screen is not shared") }
            enqueue(.watchdog(command))
        }
    }

    /// A keyframe on every screen section we send (typed `keyframe`).
    /// Changes the screen's send policy on every connection from its next frame (nothing is
    /// renegotiated); connections made later start with it.
    public func setScreenPolicy(_ policy: ScreenSendPolicy) async -> String {
        screenPolicy = policy
        for encoders in sharedEncoders.values { encoders.setPolicy(policy) }
        var changed = 0
        for participant in participants.values {
            guard let screen = participant.screen, screen.media?.encoder != nil else { continue }
            await participant.connection.setPolicy(policy, on: screen)
            changed += 1
        }
        logger.notice("send policy: \(policy.label)", ["video.policy": policy.rawValue])
        return changed == 0
            ? "Send policy: \(policy.label) (no screen is going out yet)"
            : "Send policy: \(policy.label) (\(changed) connection\(changed == 1 ? "" : "s"))"
    }

    public func requestScreenKeyframes() async -> String {
        var asked = 0
        for participant in participants.values {
            guard let screen = participant.screen, screen.media?.encoder != nil else { continue }
            await participant.connection.requestKeyframe(on: screen)
            asked += 1
        }
        return asked == 0 ? "no screen encoder is running" : "Keyframe asked for (\(asked) connections)"
    }

    var anyEncoderStalled: Bool {
        participants.values.contains { $0.screen?.media?.encoder?.isStalled == true }
    }

    /// A rebuild: a new screen section to one person (the old one inactive), so a new encoder
    /// here and a new decoder there. A share again: the same for everyone, said with `share` off
    /// and on, from the same capture.
    func renegotiatingStep(_ command: CallWatchdogCommand) async {
        guard sharing else { return }
        switch command {
        case .rebuild(let id):
            guard let participant = participants[id] else { return }
            // Shared layer encoders: the new section starts on an encoder of its own for a while.
            participant.ownEncoderNext = options.sharedLayers
            await replaceScreen(of: participant)
            logger.notice(
                "rebuilt the screen for \(participant.name): a new section, so a new encoder here and a new decoder there"
            )
        case .shareAgain:
            // Off first, so every receiver lets go of the old screen before the new sections arrive.
            // Shared layer encoders are made afresh for the new sections.
            for encoders in sharedEncoders.values { encoders.stop() }
            sharedEncoders = [:]
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

    func replaceScreen(of participant: Participant) async {
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
            fanout.source.injectStall()
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
                participant.wedge = RoomCallRules.Wedge(sticky: sticky, mid: nil)
                await applyWedge(participant)
                if participant.wedge?.mid != nil { wedged.append(participant.name) }
                matched += 1
            }
            logger.notice("fault injected: \(fault.word) of \(name.map { "\($0)'s screen" } ?? "every screen")")
            let whose = name.map { "\($0)'s screen" } ?? "every screen"
            guard matched > 0 else {
                return name.map { "no one called \($0) is in the call" } ?? "no one else is in the call"
            }
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

    static func matches(_ name: String, _ wanted: String?) -> Bool {
        guard let wanted else { return true }
        return name.caseInsensitiveCompare(wanted) == .orderedSame
    }

    /// Keeps a decoder fault on the screen it is about, as `RoomCallRules.Wedge` decides.
    func applyWedge(_ participant: Participant) async {
        guard participant.wedge != nil, participant.sharing,
            let screen = await remoteScreen(of: participant), screen.media?.videoReceiver != nil,
            let screenMid = screen.mid,
            // Read after the wait: their share may have ended meanwhile, and the fault with it.
            var wedge = participant.wedge
        else { return }
        let decoderWedged = screen.media?.videoReceiver?.isWedged == true
        switch wedge.step(screenMid: screenMid, decoderWedged: decoderWedged) {
        case .keep:
            return
        case .endedByRebuild:
            participant.wedge = nil
            logger.notice("\(participant.name)'s screen was rebuilt: its new decoder is not wedged")
            return
        case .wedge(let mid, let followsRebuild):
            if followsRebuild {
                logger.notice("\(participant.name)'s screen was rebuilt: the sticky wedge takes its new decoder too")
            }
            await participant.connection.setDecoderWedged(true, on: screen)
            guard participant.wedge != nil else {
                // Their share ended while this decoder was being wedged: the fault is over.
                await participant.connection.setDecoderWedged(false, on: screen)
                return
            }
            wedge.mid = mid
            participant.wedge = wedge
        }
    }
}
