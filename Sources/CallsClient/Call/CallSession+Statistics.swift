import Foundation
import GLibLoop
import SDPWire
import StatsLine
import ScreenCapture
import ScreenWatchdog
import ShareCore
import VideoSend
import CallMedia
import RoomProtocol
import Signalling

/// The tick: the `media` report, renewals, and the figures of each second.
extension CallSession {
    // MARK: Once a second

    func tick() async {
        let now = ContinuousClock.now
        let elapsed = lastTick.map { $0.duration(to: now).inSeconds } ?? 1
        lastTick = now
        var stats = CallStatistics()
        stats.t = (startedAt.duration(to: now)).inSeconds
        stats.id = myID
        stats.signalling = signallingUp ? "up" : "down"
        stats.sharing = sharing
        stats.sharesSent = sharesSent
        stats.welcomes = welcomes
        stats.resumes = resumes
        let processing = EchoCanceller.shared.status
        stats.audioProcessing = processing.isEmpty ? nil : processing
        var report = RoomMessage.Media()
        let muted = AudioMute.shared.isMuted
        report.muted = muted
        stats.muted = options.audio == .none ? nil : muted
        var audioNotices: [String] = []
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
                peer.camera = Self.view(
                    camera, tracker: participant.cameraView, codec: participant.camera.negotiated?.codec)
                report.cameras.append(.init(from: id, framesDecoded: camera.framesDecoded))
            }
            await applyWedge(participant)
            let remote = participant.sharing ? await remoteScreen(of: participant) : nil
            if let screen = remote, let received = figures.transceivers.first(where: { $0.mid == screen.mid })?.received
            {
                participant.screenView.update(frames: received.framesDecoded, now: now, elapsed: elapsed)
                peer.screen = Self.view(received, tracker: participant.screenView, codec: screen.negotiated?.codec)
                peer.screen?.mid = screen.mid
                decoded[id] = (screen.mid, received.framesDecoded)
            } else if participant.sharing {
                participant.screenView.update(frames: 0, now: now, elapsed: elapsed)
                peer.screen = .init()
                decoded[id] = (nil, 0)
            }
            // Who hears whom: their audio to us, ours to them as their report says.
            let heard = figures.transceivers.first(where: { $0.mid == participant.audio.mid })?.received
            var seen = AudioPathRules.Observation()
            seen.connected = state == .connected
            seen.theySendAudio = participant.audio.negotiated?.direction.receives ?? false
            seen.samplesDecoded = heard?.audioSamplesDecoded ?? 0
            seen.levelDbfs = heard?.audioRecentPeakDbfs ?? AudioLevel.silence
            if let theirs = participant.theirReport, let me = myID {
                seen.theyAreMuted = theirs.muted
                seen.theyHearUs = theirs.hearing.contains(me)
                seen.theyHearNoSoundFromUs = theirs.noSoundFrom.contains(me)
            }
            seen.weSendAudio = options.audio != .none && participant.audio.negotiated?.direction.sends == true
            seen.weAreMuted = muted
            let paths = audioPaths.observe(id, seen, now: now)
            if let audio = heard {
                peer.audio = .init(
                    samplesDecoded: audio.audioSamplesDecoded, framesConcealed: audio.audioFramesConcealed,
                    levelDbfs: audio.audioRecentPeakDbfs ?? AudioLevel.silence, hearing: paths.hearing)
                peer.audio?.noSound = paths.noSound
                peer.audio?.speaking = audio.audioSpeaking
                peer.audio?.muted = seen.theyAreMuted
                peer.audio?.bufferedMs = audio.audioBufferedMs
            }
            if paths.hearing { report.hearing.append(id) }
            if paths.noSound {
                report.noSoundFrom.append(id)
                stats.noSoundFrom.append(participant.name)
            }
            audioNotices += paths.notices(name: participant.name)
            // What we send them.
            if let screen = participant.screen,
                let sent = figures.transceivers.first(where: { $0.mid == screen.mid })?.sent
            {
                peer.video = Self.sentFigures(
                    sent, mid: screen.mid, codec: screen.negotiated?.codec?.rawValue,
                    before: &participant.screenSentBefore, elapsed: elapsed)
                peer.video?.ccInputs = figures.congestion?.estimate.inputs
            } else {
                participant.screenSentBefore = nil
            }
            let camera = participant.camera
            if let sent = figures.transceivers.first(where: { $0.mid == camera.mid })?.sent {
                peer.cameraSent = Self.sentFigures(
                    sent, mid: camera.mid, codec: camera.negotiated?.codec?.rawValue,
                    before: &participant.cameraSentBefore, elapsed: elapsed)
                peer.cameraSent?.targetKbps = sent.targetBitrate / 1000
                peer.cameraSent?.maxKbps = sent.maxBitrate / 1000
                peer.cameraSent?.capped = participant.cameraSent?.besideScreen
            } else {
                participant.cameraSentBefore = nil
            }
            if let audio = figures.transceivers.first(where: { $0.mid == participant.audio.mid })?.sent {
                peer.audioSent = .init(
                    framesSent: audio.audioFramesSent, levelDbfs: audio.audioLevelDbfs ?? AudioLevel.silence,
                    framesDropped: audio.audioFramesDropped, source: audio.audioSource ?? "",
                    silent: audio.audioSilent)
                peer.audioSent?.muted = audio.audioMuted
                if audio.audioSpeaking { stats.speaking = true }
            }
            if let theirs = participant.theirReport, let me = myID {
                peer.theirView = .init(
                    screenFramesDecoded: theirs.screens.first { $0.from == me }?.framesDecoded,
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
        let stalled = stallReporter.tick(
            now: now,
            decoded: Dictionary(uniqueKeysWithValues: decoded.map { (key($0.key, $0.value.mid), $0.value.frames) }))
        for index in stats.peers.indices {
            let id = stats.peers[index].id
            guard let screen = decoded[id] else { continue }
            let isStalled = stalled.contains(key(id, screen.mid))
            stats.peers[index].screen?.stalled = isStalled
            report.screens.append(.init(from: id, framesDecoded: screen.frames, screenStalled: isStalled))
        }
        stats.audioNotices = audioNotices
        stats.watchdog = watchdog?.status
        stats.faults =
            order.compactMap { id in
                participants[id]?.wedge.map {
                    "decoder-wedge\($0.sticky ? "-sticky" : "") \(participants[id]?.name ?? id)"
                }
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

    static func view(_ r: PeerConnectionStatistics.Received, tracker: ViewTracker, codec: MediaCodec?)
        -> CallStatistics.View
    {
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
    func remoteScreen(of participant: Participant) async -> Transceiver? {
        let candidates = await participant.connection.allTransceivers.filter { t in
            t.kind == .video && t !== participant.camera && t !== participant.screen
                && t.negotiated?.direction.receives == true
        }
        return candidates.first { $0.mid == participant.sharingMid } ?? candidates.last
    }
    /// What we send on one section (our screen or camera): counts, shape, target, what holds it
    /// back, and the rates over the last tick. A rebuild (another section) starts the rates afresh.
    static func sentFigures(
        _ sent: PeerConnectionStatistics.Sent, mid: String?, codec: String?,
        before: inout (mid: String?, frames: Int, bytes: Int)?, elapsed: Double
    ) -> CallStatsLine.Sent {
        var figures = CallStatsLine.Sent(
            framesSent: sent.framesSent, framesEncoded: sent.framesEncoded, width: sent.width,
            height: sent.height, keyframes: sent.keyframesEncoded, encoder: sent.encoder)
        figures.mid = mid
        figures.encodersMade = sent.encodersMade
        figures.codecName = codec
        figures.targetKbps = sent.targetBitrate / 1000
        figures.limitedBy = sent.limitedBy
        figures.policy = sent.policy
        figures.layer = sent.sharedLayer.map { $0 < 0 ? "own" : ["full", "half", "quarter"][min(2, $0)] }
        if let before, before.mid == mid, elapsed > 0 {
            figures.fps = Double(max(0, sent.framesSent - before.frames)) / elapsed
            figures.bitrateKbps = Int(Double(max(0, sent.bytes - before.bytes)) * 8 / elapsed / 1000)
        }
        before = (mid, sent.framesSent, sent.bytes)
        return figures
    }
}
