import Foundation
import RTPWire
import SDPWire
import ScreenCapture
import ShareCore
import VideoSend

/// The media behind one negotiated transceiver, made at negotiation:
/// - sending: an `RTPStreamSender` (our SSRC, RTX for video) writing to the transport, the
///   `RTCPReceiver` that applies the peer's feedback to it, and once a source is attached the
///   `VideoEncodingThread` + `VideoPayloader` chain (video) or the `AudioSendThread` (audio);
/// - receiving: the stream's `ReceptionStatistics` for our receiver reports, the
///   `VideoReceiveThread` (depayload and decode on its own thread) or the `AudioReceiver`, the
///   `KeyframeRequestPolicy` deciding PLIs, and for video whose section negotiated `nack` the
///   `NACKGenerator` deciding generic NACKs (RTX packets count with their original numbers).
///
/// Thread-safe. Packets arrive on the loop thread; media threads send from their own threads;
/// statistics are read from anywhere. Per-packet state is behind short locks.
package final class TransceiverMedia: Sendable {
    struct ReceiveCounters: Sendable {
        var packets = 0
        var bytes = 0
        var rtxPackets = 0
        var unwrapFailures = 0
        var senderReports = 0
        var receiverReportsSent = 0
        var plisSent = 0
        var reception: ReceptionStatistics?
        /// The queue on the path of the video we receive (`ArrivalDelay`).
        var delay: ArrivalDelay?
        var remoteRTXSSRC: UInt32?
        var keyframes = KeyframeRequestPolicy()
        /// Video whose section negotiated `nack` (RFC 4585): the missing packets to ask again for.
        var nacks: NACKGenerator?
        /// NACK messages sent, and missing packets an RTX packet brought.
        var nacksSent = 0
        var rtxRecovered = 0
    }

    private struct Sending: Sendable {
        var source: (any VideoFrameSource)?
        /// One queue and one encoder per layer (one for a stream without simulcast), best first.
        var queues: [FrameQueue] = []
        var encoders: [VideoEncodingThread] = []
        /// A simulcast screen's split of its target over the layers.
        var allocation: SimulcastAllocation?
        /// The bitrate the encoder was last told (the congestion controller's share) and the most
        /// it was configured with.
        var bitrate = 0
        var maximumBitrate = 0
        var audio: AudioSendThread?
        /// A mesh screen sent from shared layer encoders: this connection's tap on them.
        var shared: (encoders: SharedLayerEncoders, tap: SharedLayerTap)?
        /// The tap starts on an encoder of its own (a rebuild for this person).
        var ownEncoderFirst = false
        var started = false
        var stopped = false
    }

    let negotiated: SessionNegotiation.Media
    let kind: Transceiver.Kind
    /// What we send on: the stream, or a simulcast screen's layers best first.
    let senders: [RTPStreamSender]
    /// The stream (a simulcast screen's best layer).
    let sender: RTPStreamSender?
    let rtcp: RTCPReceiver?
    /// Time from an honoured PLI/FIR to the keyframe that answered it.
    let keyframeResponse = KeyframeResponse()
    package let videoReceiver: VideoReceiveThread?
    let audioReceiver: AudioReceiver?
    /// Received video whose section negotiated generic NACK: the NACK timer asks for its losses.
    let receivesWithNACK: Bool
    private let logger: Logger
    private let sending = Locked(Sending())
    private let receiving: Locked<ReceiveCounters>

    /// `continuing`: the sequence numbers an earlier sender on these SSRCs stopped at.
    init(
        negotiated: SessionNegotiation.Media, kind: Transceiver.Kind, localSSRC: UInt32, localRTXSSRC: UInt32?,
        continuing: (media: UInt16, rtx: UInt16)? = nil, writer: @escaping PacketWriter, logger: Logger
    ) throws {
        self.negotiated = negotiated
        self.kind = kind
        self.logger = logger
        var counters = ReceiveCounters()
        counters.remoteRTXSSRC = negotiated.remoteRTXSSRC
        if let ssrc = negotiated.remoteSSRC {
            counters.reception = ReceptionStatistics(ssrc: ssrc, clockRate: Int(negotiated.codec.clockRate))
        }
        receivesWithNACK = Self.asksForRetransmissions(negotiated, kind: kind)
        counters.nacks = receivesWithNACK ? NACKGenerator() : nil
        receiving = Locked(counters)
        var senders: [RTPStreamSender] = []
        if negotiated.direction.sends {
            let isVideo = kind == .video
            // A simulcast screen's lower layers take SSRCs of their own each time (the section
            // announces none: their packets name their layer by RID).
            let rids: [String?] = isVideo && negotiated.simulcastRIDs.count > 1 ? negotiated.simulcastRIDs : [nil]
            for (index, rid) in rids.enumerated() {
                let ssrc = index == 0 ? localSSRC : .random(in: 1...UInt32.max)
                let rtxSSRC = index == 0 ? localRTXSSRC : .random(in: 1...UInt32.max)
                senders.append(
                    RTPStreamSender(
                        configuration: .init(
                            ssrc: ssrc, payloadType: negotiated.payloadType,
                            clockRate: Int(negotiated.codec.clockRate),
                            rtx: isVideo ? zip2(rtxSSRC, negotiated.rtxPayloadType) : nil,
                            extensions: negotiated.extensions.sendExtensions(mid: negotiated.mid, rid: rid),
                            keepsHistory: isVideo),
                        firstSequence: index == 0
                            ? continuing?.media ?? .random(in: 0...0x7FFF) : .random(in: 0...0x7FFF),
                        firstRTXSequence: index == 0
                            ? continuing?.rtx ?? .random(in: 0...0x7FFF) : .random(in: 0...0x7FFF),
                        writer: writer))
            }
        }
        self.senders = senders
        let sendingSender = senders.first
        sender = sendingSender
        if negotiated.direction.receives {
            if kind == .video, let codec = negotiated.videoCodec {
                let receiver = VideoReceiveThread(codec: codec, logger: logger)
                try receiver.start()
                videoReceiver = receiver
                audioReceiver = nil
            } else {
                videoReceiver = nil
                let receiver = kind == .audio ? try AudioReceiver(logger: logger) : nil
                receiver?.start()
                audioReceiver = receiver
            }
        } else {
            videoReceiver = nil
            audioReceiver = nil
        }
        // The RTCP receiver's keyframe requests reach the encoder attached later.
        let box = sending
        if sendingSender != nil {
            let response = keyframeResponse
            rtcp = RTCPReceiver(
                video: kind == .video ? senders : [],
                audioSSRC: kind == .audio ? localSSRC : nil
            ) { ask, layer in
                let (encoder, shared) = box.withLock {
                    ($0.encoders.indices.contains(layer) ? $0.encoders[layer] : nil, $0.shared)
                }
                if encoder != nil || shared != nil { response.requested(nowMicros: Clocks.monotonicMicros()) }
                if let (encoders, tap) = shared {
                    switch ask {
                    case .keyframe: encoders.requestKeyframe(for: tap)
                    case .keyframeDidNotGetThrough: encoders.keyframeDidNotGetThrough(for: tap)
                    }
                    return
                }
                switch ask {
                case .keyframe: encoder?.requestKeyframe()
                case .keyframeDidNotGetThrough: encoder?.requestSmallerKeyframe()
                }
            }
        } else {
            rtcp = nil
        }
    }

    // MARK: Sending

    /// Attaches a frame source: encoder thread, payloader and this stream's sender. Started at once
    /// when the connection is up, else when it comes up. A simulcast section gets one encoder per
    /// layer (full, half and a quarter of the size), fed the same captured frames, each writing to
    /// its layer's sender; the target is split over them (`SimulcastAllocation`).
    func attachVideo(_ source: any VideoFrameSource, settings: VideoEncodingThread.Settings) throws(PeerConnectionError)
    {
        guard kind == .video, !senders.isEmpty, let codec = negotiated.videoCodec else {
            throw .notSending("this transceiver does not send video")
        }
        let logger = self.logger
        let response = keyframeResponse
        var settings = settings
        // Congestion control sets the target from its first second on; until then the encoder
        // starts where the estimate starts.
        settings.startBitrate = settings.startBitrate ?? CongestionController.startVideoBitrate
        var allocation: SimulcastAllocation?
        var layerRates: [Int?] = [settings.initialTarget]
        if senders.count > 1 {
            var split = SimulcastAllocation.screen(rids: negotiated.simulcastRIDs, maxBitrate: settings.bitrate)
            layerRates = split.allocate(settings.initialTarget, nowMicros: Clocks.monotonicMicros())
            allocation = split
        }
        var queues: [FrameQueue] = []
        var encoders: [VideoEncodingThread] = []
        for (index, sender) in senders.enumerated() {
            let queue = FrameQueue()
            let payloader = Locked(VideoPayloader(codec: codec))
            let clock = RTPClock(rate: 90_000)
            var layer = settings
            if let allocation {
                layer.sizeDivisor = allocation.layers[index].divisor
                layer.bitrate = allocation.layers[index].maxBitrate
                layer.startBitrate = layerRates[index] ?? allocation.layers[index].minBitrate
                layer.makeLayer()
            }
            let encoder = VideoEncodingThread(queue: queue, settings: layer, logger: logger) { frame, captureMicros in
                do {
                    let units = try payloader.withLock { try $0.payload(frame) }
                    sender.send(
                        units, timestamp: clock.timestamp(forMicros: captureMicros),
                        nowMicros: Clocks.monotonicMicros())
                    if frame.isKeyframe { response.keyframeSent(nowMicros: Clocks.monotonicMicros()) }
                } catch {
                    logger.warning("a frame could not be packetized: \(error)")
                }
            }
            if layerRates[index] == nil { encoder.setActive(false) }
            queues.append(queue)
            encoders.append(encoder)
        }
        let startNow = try sending.withLock { s throws(PeerConnectionError) -> Bool in
            guard s.encoders.isEmpty else { throw .notSending("a video source is already attached") }
            s.source = source
            s.queues = queues
            s.encoders = encoders
            s.allocation = allocation
            s.bitrate = settings.initialTarget
            s.maximumBitrate = settings.bitrate
            return s.started
        }
        if startNow {
            for encoder in encoders { encoder.start() }
            source.start(deliver: Self.fanOut(queues))
        }
    }

    /// Sends the screen from a mesh's shared layer encoders: this connection is sent the layer its
    /// own estimate carries (`SharedLayerTap`), on its own stream. Starts when the connection is up.
    /// `ownEncoder`: an encoder of its own first, for a while (`SharedLayerEncoders.dedicate`).
    func attachShared(_ encoders: SharedLayerEncoders, ownEncoder: Bool = false) throws(PeerConnectionError) {
        guard kind == .video, let sender, let codec = negotiated.videoCodec else {
            throw .notSending("this transceiver does not send video")
        }
        guard codec == encoders.codec else {
            throw .notSending(
                "the section negotiated \(codec.rawValue), the shared encoders are \(encoders.codec.rawValue)")
        }
        let start = CongestionController.startVideoBitrate
        let tap = SharedLayerTap(
            sender: sender, codec: codec, allocation: encoders.allocation, startBitrate: start,
            response: keyframeResponse, logger: logger)
        let startNow = try sending.withLock { s throws(PeerConnectionError) -> Bool in
            guard s.encoders.isEmpty, s.shared == nil else { throw .notSending("a video source is already attached") }
            s.shared = (encoders, tap)
            s.ownEncoderFirst = ownEncoder
            s.bitrate = start
            s.maximumBitrate = encoders.allocation.layers[0].maxBitrate
            return s.started
        }
        if startNow { Self.startShared(encoders, tap, ownEncoder: ownEncoder) }
    }

    private static func startShared(_ encoders: SharedLayerEncoders, _ tap: SharedLayerTap, ownEncoder: Bool) {
        encoders.add(tap)
        if ownEncoder { encoders.dedicate(tap, scale: 1, forSeconds: 0) }
    }

    /// What a simulcast layer's encoder may spend for its size: 0.12 bits a pixel (960×540 at
    /// 30 fps: 1.9 Mbit/s; 640×360: 830 kbit/s; 320×180: 210 kbit/s), near libwebrtc's simulcast
    /// table with room for a screen's text.
    static let layerBitsPerPixel = 0.12

    /// Each captured frame to every layer's queue (converted once for all of them).
    private static func fanOut(_ queues: [FrameQueue]) -> @Sendable (VideoFrame) -> Void {
        if queues.count == 1 { return { [queue = queues[0]] in queue.push($0) } }
        return { frame in
            let shared = frame.sharingConversions()
            for queue in queues { queue.push(shared) }
        }
    }

    /// Attaches an audio source (the tone, a microphone) through the Opus send thread, at
    /// `bitrate` bit/s (nil: `AudioSendThread.defaultBitrate`).
    func attachAudio(source: any AudioFrameSource, bitrate: Int? = nil) throws {
        guard kind == .audio, let sender else {
            throw PeerConnectionError.notSending("this transceiver does not send audio")
        }
        let audio = AudioSendThread(
            sender: sender, source: source, logger: logger, bitrate: bitrate ?? AudioSendThread.defaultBitrate)
        let startNow = try sending.withLock { s throws(PeerConnectionError) -> Bool in
            guard s.audio == nil else { throw .notSending("audio is already attached") }
            s.audio = audio
            return s.started
        }
        if startNow { try audio.start() }
    }

    /// The connection is up: start what is attached (and anything attached later at once).
    func startSending() {
        let started = sending.withLock {
            s -> (
                source: (any VideoFrameSource)?, queues: [FrameQueue], encoders: [VideoEncodingThread],
                audio: AudioSendThread?
            )? in
            guard !s.started, !s.stopped else { return nil }
            s.started = true
            return (s.source, s.queues, s.encoders, s.audio)
        }
        guard let (source, queues, encoders, audio) = started else { return }
        if let (shared, tap, own) = sending.withLock({ s in s.shared.map { ($0.encoders, $0.tap, s.ownEncoderFirst) } })
        {
            Self.startShared(shared, tap, ownEncoder: own)
        }
        for encoder in encoders { encoder.start() }
        do { try audio?.start() } catch { logger.error("audio could not start: \(error)") }
        if let source, !queues.isEmpty { source.start(deliver: Self.fanOut(queues)) }
    }

    /// Stops the source, the encoder and the audio thread; they do not start again.
    func stopSending() {
        let (source, encoders, audio, shared) = sending.withLock { s in
            s.started = false
            s.stopped = true
            return (s.source, s.encoders, s.audio, s.shared)
        }
        if let (sharedEncoders, tap) = shared { sharedEncoders.release(tap) }
        source?.stop()
        for encoder in encoders { encoder.stop() }
        audio?.stop()
    }

    func stop() {
        stopSending()
        videoReceiver?.stop()
        audioReceiver?.stop()
    }

    /// The encoder (a simulcast screen's best layer's; a shared screen's layer this connection is on).
    package var encoder: VideoEncodingThread? { encoders.first }
    /// Every layer's encoder, best first (one without simulcast; a shared screen's: the layer this
    /// connection is sent).
    package var encoders: [VideoEncodingThread] {
        sending.withLock { s in
            guard let (shared, tap) = s.shared else { return s.encoders }
            return [shared.encoder(for: tap) ?? shared.encoders[0]]
        }
    }

    /// The negotiated video codec (nil for audio).
    package var videoCodec: VideoCodec? { negotiated.videoCodec }
    /// A shared screen's layer this connection is sent (0 the full size), nil otherwise.
    package var sharedLayer: Int? { sending.withLock { $0.shared?.tap.layer } }
    /// The simulcast layers' RIDs, best first (empty: one stream).
    var layerRIDs: [String] { senders.count > 1 ? negotiated.simulcastRIDs : [] }
    var audioSender: AudioSendThread? { sending.withLock { $0.audio } }
    var queueCounters: FrameQueue.Counters? {
        sending.withLock { $0.shared?.encoders.queueCounters ?? $0.queues.first?.counters }
    }
    var targetBitrate: Int { sending.withLock { $0.bitrate } }
    var maximumBitrate: Int { sending.withLock { $0.maximumBitrate } }

    /// New limits for the video encoder from its next frame (a camera capped beside a shared
    /// screen, or given its defaults back): the most it may use, which is also its weight in the
    /// congestion controller's split, and the long side of what it sends.
    func setVideoLimits(maxBitrate: Int, maxLongSide: Int) {
        let encoder = sending.withLock { s -> VideoEncodingThread? in
            s.maximumBitrate = maxBitrate
            s.bitrate = min(s.bitrate, maxBitrate)
            return s.encoders.count == 1 ? s.encoders.first : nil
        }
        encoder?.setLimits(maxBitrate: maxBitrate, maxLongSide: maxLongSide)
    }

    /// The congestion controller's share for this encoder; passed on when it moved by `step` or more.
    /// A simulcast screen splits it over its layers each time (a layer may be switched off or
    /// come back), and passes on each layer's rate that moved by `step`.
    func applyTargetBitrate(_ bitsPerSecond: Int, step: Double) {
        let now = Clocks.monotonicMicros()
        if let (shared, tap) = sending.withLock({ s -> (SharedLayerEncoders, SharedLayerTap)? in
            guard let shared = s.shared else { return nil }
            s.bitrate = bitsPerSecond
            return shared
        }) {
            shared.setTarget(bitsPerSecond, of: tap)
            return
        }
        let changes = sending.withLock { s -> [(VideoEncodingThread, Int?)] in
            guard !s.encoders.isEmpty, s.bitrate > 0 else { return [] }
            if var allocation = s.allocation {
                s.bitrate = bitsPerSecond
                let rates = allocation.allocate(bitsPerSecond, nowMicros: now)
                s.allocation = allocation
                return Array(zip(s.encoders, rates))
            }
            guard abs(Double(bitsPerSecond - s.bitrate)) >= step * Double(s.bitrate) else { return [] }
            s.bitrate = bitsPerSecond
            return [(s.encoders[0], bitsPerSecond)]
        }
        for (encoder, rate) in changes {
            guard let rate else {
                encoder.setActive(false)
                continue
            }
            encoder.setBitrate(rate)
            encoder.setActive(true)
        }
    }

    // MARK: Receiving

    /// One packet routed here (on the loop thread). RTX is unwrapped to the media stream first.
    func receive(_ packet: RTPPacket, isRTX: Bool, size: Int, nowMicros: Int64) {
        var packet = packet
        let accepted = receiving.withLock { r -> Bool in
            r.bytes += size
            if isRTX {
                r.rtxPackets += 1
                r.remoteRTXSSRC = packet.ssrc
                // Padding only (a sender's bandwidth probe): nothing to unwrap.
                if packet.payload.isEmpty, packet.paddingSize > 0 { return false }
                guard let media = r.reception?.ssrc, !packet.payload.isEmpty,
                    let original = try? RTX.unwrap(
                        packet, originalSSRC: media, originalPayloadType: negotiated.payloadType)
                else {
                    r.unwrapFailures += 1
                    return false
                }
                packet = original
                if r.nacks?.received(packet.sequenceNumber, nowMicros: nowMicros) == true { r.rtxRecovered += 1 }
                return true
            }
            r.packets += 1
            if r.reception?.ssrc != packet.ssrc {
                r.reception = ReceptionStatistics(ssrc: packet.ssrc, clockRate: Int(negotiated.codec.clockRate))
                if r.nacks != nil { r.nacks = NACKGenerator() }  // a new stream: nothing of the old is missing
                r.delay = nil
            }
            // The stream's first packet starts the delay reading (an announced SSRC has its
            // reception statistics from the start).
            if r.delay == nil, kind == .video { r.delay = ArrivalDelay(clockRate: Int(negotiated.codec.clockRate)) }
            r.delay?.received(timestamp: packet.timestamp, arrivalMicros: nowMicros)
            r.nacks?.received(packet.sequenceNumber, nowMicros: nowMicros)
            r.reception?.received(
                sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, bytes: size,
                arrivalMicros: nowMicros)
            return true
        }
        guard accepted, packet.payloadType == negotiated.payloadType else { return }
        videoReceiver?.push(packet)
        audioReceiver?.receive(packet)
    }

    /// A sender report from the stream we receive.
    func senderReportReceived(_ report: SenderReport, nowMicros: Int64) -> Bool {
        receiving.withLock { r in
            guard r.reception?.ssrc == report.ssrc else { return false }
            r.senderReports += 1
            r.reception?.senderReportReceived(ntp: report.ntpTimestamp, arrivalMicros: nowMicros)
            return true
        }
    }

    var remoteMediaSSRC: UInt32? { receiving.withLock { $0.reception?.ssrc } }

    /// Our report block on the stream we receive, if anything arrived.
    func receptionReport(nowMicros: Int64) -> ReceptionReport? {
        receiving.withLock { r in
            guard r.reception?.packetsReceived ?? 0 > 0 else { return nil }
            r.receiverReportsSent += 1
            return r.reception?.report(nowMicros: nowMicros)
        }
    }

    /// Video that negotiated generic NACK (`a=rtcp-fb:PT nack`) and which we receive.
    static func asksForRetransmissions(_ negotiated: SessionNegotiation.Media, kind: Transceiver.Kind) -> Bool {
        kind == .video && negotiated.direction.receives && negotiated.feedback.contains("nack")
    }

    /// The generic NACK to send now for the video we receive, if packets are missing; the timing
    /// (retries, when to give up) follows the round-trip time when known.
    func negativeAcknowledgement(senderSSRC: UInt32, nowMicros: Int64, rttMicros: Int64?) -> GenericNACK? {
        let timing = RetransmissionTiming(rttMicros: rttMicros)
        videoReceiver?.setRoundTrip(micros: rttMicros)
        return receiving.withLock { r in
            guard let media = r.reception?.ssrc, let due = r.nacks?.due(nowMicros: nowMicros, timing: timing),
                !due.isEmpty
            else { return nil }
            r.nacksSent += 1
            return GenericNACK(senderSSRC: senderSSRC, mediaSSRC: media, lostSequenceNumbers: due)
        }
    }

    /// The PLI to send now, if the video receiver waits for a keyframe and none was asked for in
    /// the last 300 ms, or its decoder has given nothing for 3 s while frames arrive.
    func pictureLossIndication(senderSSRC: UInt32, nowMicros: Int64) -> PictureLossIndication? {
        guard let videoReceiver else { return nil }
        let counters = videoReceiver.counters
        return receiving.withLock { r in
            guard let media = r.reception?.ssrc, r.reception?.packetsReceived ?? 0 > 0,
                r.keyframes.shouldRequest(
                    waitingForKeyframe: counters.waitingForKeyframe, framesAssembled: counters.framesAssembled,
                    framesDecoded: counters.framesDecoded, nowMicros: nowMicros)
            else { return nil }
            r.plisSent += 1
            return PictureLossIndication(senderSSRC: senderSSRC, mediaSSRC: media)
        }
    }

    var receiveCounters: ReceiveCounters { receiving.withLock { $0 } }
}

private func zip2(_ a: UInt32?, _ b: UInt8?) -> (ssrc: UInt32, payloadType: UInt8)? {
    guard let a, let b else { return nil }
    return (a, b)
}

extension VideoEncodingThread.Settings {
    /// A simulcast layer: bounded by what its size may spend (`TransceiverMedia.layerBitsPerPixel`)
    /// and sized by what its frames spend, not by the quantizer band (`sizesByQuantizer`).
    mutating func makeLayer() {
        maxBitsPerPixel = TransceiverMedia.layerBitsPerPixel
        sizesByQuantizer = false
    }
}
