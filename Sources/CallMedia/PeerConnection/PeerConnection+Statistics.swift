import Foundation
import GLibLoop
import SDPWire
import ShareCore
import VideoSend
import WebRTCTransport

/// The connection's figures: each transceiver's sending and receiving, and the transport's.
extension PeerConnection {
    // MARK: Statistics

    public func statistics() -> PeerConnectionStatistics {
        var list: [PeerConnectionStatistics.TransceiverStatistics] = []
        for transceiver in transceivers {
            let negotiated = transceiver.negotiated
            var entry = PeerConnectionStatistics.TransceiverStatistics(
                mid: transceiver.mid, kind: transceiver.kind, direction: negotiated?.direction ?? transceiver.direction,
                codec: negotiated?.codec)
            if let media = transceiver.media {
                if let sender = media.sender { (entry.sent, entry.feedback) = Self.sent(media, sender) }
                if media.negotiated.direction.receives { entry.received = Self.received(media) }
            }
            list.append(entry)
        }
        var transport = PeerConnectionStatistics.Transport(state: stateBox.state, iceState: "new")
        if let leg {
            let t = leg.transport, counters = t.counters, legCounters = leg.counters
            transport.iceState = t.ice.state.description
            transport.selectedPair = t.ice.selectedPair?.description
            transport.relayed = t.ice.selectedPair?.isRelayed ?? false
            transport.srtpProfile = t.srtpProfile?.rawValue
            transport.bytesSent = counters.bytesSent
            transport.bytesReceived = counters.bytesReceived
            transport.rtpReceived = counters.rtpReceived
            transport.rtcpReceived = counters.rtcpReceived
            transport.droppedDatagrams = counters.dropped + counters.unprotectFailures
            transport.rtpUnrouted = legCounters.rtpUnrouted
            transport.senderReportsSent = legCounters.senderReportsSent
            transport.receiverReportsSent = legCounters.receiverReportsSent
        }
        transport.rttMs = list.lazy.compactMap { $0.feedback?.rttMs }.first
        return PeerConnectionStatistics(
            transceivers: list, transport: transport, congestion: leg?.congestionStatistics())
    }

    static func sent(_ media: TransceiverMedia, _ sender: RTPStreamSender)
        -> (PeerConnectionStatistics.Sent, PeerConnectionStatistics.Feedback?)
    {
        var sent = PeerConnectionStatistics.Sent()
        // A simulcast screen's frame and encoder figures are its best layer's that is on.
        let encoders = media.encoders
        let shown = encoders.firstIndex(where: \.isActive) ?? 0
        sent.framesSent = (shown < media.senders.count ? media.senders[shown] : sender).counters.framesSent
        for stream in media.senders {
            let c = stream.counters
            sent.packets += c.packetsSent
            sent.bytes += c.bytesSent
            sent.rtxPackets += c.rtxPacketsSent
            sent.sendFailures += c.sendFailures
            sent.rtxRefused += c.rtxRefused
            sent.rtxTooSoon += stream.history.counters.tooSoon
        }
        let rids = media.layerRIDs
        if !rids.isEmpty {
            for (index, stream) in media.senders.enumerated() where index < rids.count {
                var layer = PeerConnectionStatistics.Layer()
                let c = stream.counters
                layer.rid = rids[index]
                layer.packets = c.packetsSent
                layer.bytes = c.bytesSent
                layer.rtxPackets = c.rtxPacketsSent
                layer.nacksReceived = c.nacksReceived
                layer.framesSent = c.framesSent
                if index < encoders.count {
                    let e = encoders[index].counters
                    layer.active = e.active
                    layer.width = e.width
                    layer.height = e.height
                    layer.framesEncoded = e.framesEncoded
                    layer.keyframes = e.keyframes
                    layer.targetBitrate = e.targetBitrate
                }
                sent.layers.append(layer)
            }
        }
        if let encoder = shown < encoders.count ? encoders[shown] : nil {
            let e = encoder.counters
            sent.framesEncoded = e.framesEncoded
            sent.keyframesEncoded = e.keyframes
            sent.keyframeRequests = e.keyframeRequests
            sent.encodeErrors = e.errors
            sent.width = e.width
            sent.height = e.height
            sent.encoder = encoder.implementation
            sent.targetBitrate = e.targetBitrate
            (sent.maxBitrate, sent.maxLongSide) = encoder.limits
            sent.policy = e.policy.rawValue
            sent.allowedFrameRate = e.frameRate
            sent.limitedBy = e.limit.rawValue
            sent.framesSkipped = e.framesSkipped
            sent.framesRepeated = e.framesRepeated
            sent.encodersMade = e.encodersMade
            sent.encodeMs = e.encodeMicros / 1000
            sent.overshootPercent = e.overshootPercent
            sent.quantizer = e.quantizer
            sent.framesDroppedForRate = e.framesDroppedForRate
            sent.periodicKeyframes = e.periodicKeyframes
            sent.smallerKeyframes = e.smallerKeyframes
            let response = media.keyframeResponse.figures
            sent.keyframeResponses = response.answered
            sent.keyframeResponseLastMs = response.lastMs
            sent.keyframeResponseMaxMs = response.maxMs
            sent.framesCaptured = media.queueCounters?.pushed ?? 0
            sent.sharedLayer = media.sharedLayer
        }
        if let audio = media.audioSender {
            let a = audio.snapshot
            sent.audioFramesSent = a.framesEncoded
            sent.audioFramesDropped = a.framesDropped
            sent.audioLevelDbfs = a.levelDbfs
            sent.audioSource = a.sourceFailure.map { "\(audio.source.description) (\($0))" } ?? audio.source.description
            sent.audioSilent = a.silent
            sent.audioMuted = a.muted
            sent.audioSpeaking = a.speaking
        }
        return (sent, media.rtcp?.figures)
    }

    static func received(_ media: TransceiverMedia) -> PeerConnectionStatistics.Received {
        var received = PeerConnectionStatistics.Received()
        let r = media.receiveCounters
        received.packets = r.packets
        received.bytes = r.bytes
        received.rtxPackets = r.rtxPackets
        received.packetsLost = r.reception?.cumulativeLost ?? 0
        received.jitterMs = r.reception?.jitterMilliseconds
        received.queuingDelayMs = r.delay?.queuingMilliseconds
        received.senderReports = r.senderReports
        received.receiverReportsSent = r.receiverReportsSent
        received.plisSent = r.plisSent
        received.nacksSent = r.nacksSent
        received.packetsNacked = r.nacks?.requested ?? 0
        received.rtxRecovered = r.rtxRecovered
        if let v = media.videoReceiver?.counters {
            received.framesAssembled = v.framesAssembled
            received.keyframesAssembled = v.keyframesAssembled
            received.framesDropped = v.framesDropped
            received.framesDecoded = v.framesDecoded
            received.keyframesDecoded = v.keyframesDecoded
            received.decodeErrors = v.decodeErrors
            received.width = v.width
            received.height = v.height
            received.waitingForKeyframe = v.waitingForKeyframe
            received.framesSwallowed = v.framesSwallowed
            received.packetsRecovered = v.packetsRecovered
            received.packetsGivenUp = v.packetsGivenUp
            received.framesGivenUp = v.framesGivenUp
            received.framesSkippedForKeyframe = v.framesSkippedForKeyframe
            received.holdMs = v.holdMs
        }
        if let a = media.audioReceiver?.counters {
            received.audioFramesDecoded = a.framesDecoded
            received.audioFramesConcealed = a.framesConcealed
            received.audioSamplesDecoded = a.samplesDecoded
            received.audioRecentPeakDbfs = a.recentPeakDbfs
            received.audioHearingPeakDbfs = a.hearingPeakDbfs
            received.audioLevelDbfs = a.levelDbfs
            received.audioPeakDbfs = a.peakDbfs
            received.audioSpeaking = a.speaking
            received.audioBufferedMs = a.bufferedMs
        }
        return received
    }

    /// Fault injection (drills and tests): the decoder of a receiving video transceiver swallows
    /// every frame while wedged. Only its current decoder: media made anew by a later exchange
    /// starts unwedged. False when there is no decoder to wedge.
    @discardableResult
    public func setDecoderWedged(_ on: Bool, on transceiver: Transceiver) -> Bool {
        guard let receiver = transceiver.media?.videoReceiver else { return false }
        receiver.setWedged(on)
        return true
    }

    /// The last picture decoded on a receiving video transceiver (for snapshots).
    public func latestPicture(on transceiver: Transceiver) -> VideoFrame? {
        transceiver.media?.videoReceiver?.latestPicture
    }

    /// Stops what we send (sources, encoders, audio) but keeps the connection: e.g. before telling
    /// a signalling server the session ends.
    public func stopSending() {
        for transceiver in transceivers { transceiver.media?.stopSending() }
    }
}
