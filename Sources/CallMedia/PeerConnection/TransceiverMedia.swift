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
        var queue: FrameQueue?
        var encoder: VideoEncodingThread?
        /// The bitrate the encoder was last told (the congestion controller's share) and the most
        /// it was configured with.
        var bitrate = 0
        var maximumBitrate = 0
        var audio: AudioSendThread?
        var started = false
        var stopped = false
    }

    let negotiated: SessionNegotiation.Media
    let kind: Transceiver.Kind
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
        let sendingSender: RTPStreamSender?
        if negotiated.direction.sends {
            let isVideo = kind == .video
            let sender = RTPStreamSender(
                configuration: .init(
                    ssrc: localSSRC, payloadType: negotiated.payloadType,
                    clockRate: Int(negotiated.codec.clockRate),
                    rtx: isVideo ? zip2(localRTXSSRC, negotiated.rtxPayloadType) : nil,
                    extensions: negotiated.extensions.sendExtensions(mid: negotiated.mid),
                    keepsHistory: isVideo),
                firstSequence: continuing?.media ?? .random(in: 0...0x7FFF),
                firstRTXSequence: continuing?.rtx ?? .random(in: 0...0x7FFF),
                writer: writer)
            sendingSender = sender
        } else {
            sendingSender = nil
        }
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
        if let sendingSender {
            let response = keyframeResponse
            rtcp = RTCPReceiver(
                video: kind == .video ? sendingSender : nil,
                audioSSRC: kind == .audio ? localSSRC : nil
            ) { ask in
                let encoder = box.withLock { $0.encoder }
                if encoder != nil { response.requested(nowMicros: Clocks.monotonicMicros()) }
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
    /// when the connection is up, else when it comes up.
    func attachVideo(_ source: any VideoFrameSource, settings: VideoEncodingThread.Settings) throws(PeerConnectionError)
    {
        guard kind == .video, let sender, let codec = negotiated.videoCodec else {
            throw .notSending("this transceiver does not send video")
        }
        let queue = FrameQueue()
        let payloader = Locked(VideoPayloader(codec: codec))
        let clock = RTPClock(rate: 90_000)
        let logger = self.logger
        let response = keyframeResponse
        var settings = settings
        // Congestion control sets the target from its first second on; until then the encoder
        // starts where the estimate starts.
        settings.startBitrate = settings.startBitrate ?? CongestionController.startVideoBitrate
        let encoder = VideoEncodingThread(queue: queue, settings: settings, logger: logger) { frame, captureMicros in
            do {
                let units = try payloader.withLock { try $0.payload(frame) }
                sender.send(
                    units, timestamp: clock.timestamp(forMicros: captureMicros), nowMicros: Clocks.monotonicMicros())
                if frame.isKeyframe { response.keyframeSent(nowMicros: Clocks.monotonicMicros()) }
            } catch {
                logger.warning("a frame could not be packetized: \(error)")
            }
        }
        let startNow = try sending.withLock { s throws(PeerConnectionError) -> Bool in
            guard s.encoder == nil else { throw .notSending("a video source is already attached") }
            s.source = source
            s.queue = queue
            s.encoder = encoder
            s.bitrate = settings.initialTarget
            s.maximumBitrate = settings.bitrate
            return s.started
        }
        if startNow {
            encoder.start()
            source.start { queue.push($0) }
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
                source: (any VideoFrameSource)?, queue: FrameQueue?, encoder: VideoEncodingThread?,
                audio: AudioSendThread?
            )? in
            guard !s.started, !s.stopped else { return nil }
            s.started = true
            return (s.source, s.queue, s.encoder, s.audio)
        }
        guard let (source, queue, encoder, audio) = started else { return }
        encoder?.start()
        do { try audio?.start() } catch { logger.error("audio could not start: \(error)") }
        if let source, let queue { source.start { queue.push($0) } }
    }

    /// Stops the source, the encoder and the audio thread; they do not start again.
    func stopSending() {
        let (source, encoder, audio) = sending.withLock { s in
            s.started = false
            s.stopped = true
            return (s.source, s.encoder, s.audio)
        }
        source?.stop()
        encoder?.stop()
        audio?.stop()
    }

    func stop() {
        stopSending()
        videoReceiver?.stop()
        audioReceiver?.stop()
    }

    package var encoder: VideoEncodingThread? { sending.withLock { $0.encoder } }
    var audioSender: AudioSendThread? { sending.withLock { $0.audio } }
    var queueCounters: FrameQueue.Counters? { sending.withLock { $0.queue?.counters } }
    var targetBitrate: Int { sending.withLock { $0.bitrate } }
    var maximumBitrate: Int { sending.withLock { $0.maximumBitrate } }

    /// New limits for the video encoder from its next frame (a camera capped beside a shared
    /// screen, or given its defaults back): the most it may use, which is also its weight in the
    /// congestion controller's split, and the long side of what it sends.
    func setVideoLimits(maxBitrate: Int, maxLongSide: Int) {
        let encoder = sending.withLock { s -> VideoEncodingThread? in
            s.maximumBitrate = maxBitrate
            s.bitrate = min(s.bitrate, maxBitrate)
            return s.encoder
        }
        encoder?.setLimits(maxBitrate: maxBitrate, maxLongSide: maxLongSide)
    }

    /// The congestion controller's share for this encoder; passed on when it moved by `step` or more.
    func applyTargetBitrate(_ bitsPerSecond: Int, step: Double) {
        let encoder = sending.withLock { s -> VideoEncodingThread? in
            guard let encoder = s.encoder, s.bitrate > 0,
                abs(Double(bitsPerSecond - s.bitrate)) >= step * Double(s.bitrate)
            else { return nil }
            s.bitrate = bitsPerSecond
            return encoder
        }
        encoder?.setBitrate(bitsPerSecond)
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
            }
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
