import RTPWire
import ShareCore
import VideoSend

/// Applies incoming RTCP for the streams we send: PLI and FIR ask the encoder for a keyframe (at
/// most once per 300 ms; once a second while a receiver keeps asking — two keyframes in the last
/// two seconds — so a receiver that cannot keep up does not turn the share into a stream of
/// keyframes that keeps it from ever keeping up), generic NACKs are answered from the retransmission history, receiver
/// reports become round-trip time and loss, REMB is recorded. Runs on the transport's thread;
/// what it learns is read once a second.
///
/// The first RTCP the receiver sends also asks for a keyframe (unless it asks for one itself):
/// it is the first sign that the receiver decrypts what we send. Our side of DTLS can finish
/// before theirs — as the DTLS server we send the last flight, and when it is lost the receiver
/// retransmits its own after a second — so the first keyframes may go out before the receiver
/// holds the keys and be lost whole. A receiver that asks for keyframes on its own (Chromium)
/// would then ask; one that asks only when its jitter buffer overflows (aiortc, many ingest
/// servers) decodes nothing until the next periodic keyframe, ten seconds later.
public final class RTCPReceiver: Sendable {
    public struct Figures: Sendable, Equatable {
        public var pli = 0
        public var fir = 0
        public var nacks = 0
        public var keyframesAsked = 0
        /// Of those, asked again after two keyframes within 2 s: made smaller.
        public var smallerKeyframesAsked = 0
        /// A keyframe was asked when the receiver was first heard (not counted in `keyframesAsked`).
        public var keyframeOnFirstReport = false
        public var rttMs: Double?
        public var fractionLost: Double?
        public var remb: Int?
        public var malformed = 0
        public var lastError: String?
    }

    private struct State {
        var figures = Figures()
        /// Per layer (0 for a stream without simulcast): the last keyframe asked, and those of
        /// the last two seconds.
        var lastKeyframeMicros: [Int: Int64] = [:]
        var keyframesAnswered: [Int: [Int64]] = [:]
        var lastFIRSequence: [UInt32: UInt8] = [:]
        var heard = false
    }

    /// The video streams we send: one, or a simulcast screen's layers, best first.
    private let video: [RTPStreamSender]
    /// Each video SSRC (media and RTX) and the layer it belongs to.
    private let videoLayers: [UInt32: Int]
    private let audioSSRC: UInt32?
    private let requestKeyframe: @Sendable (KeyframeAsk, _ layer: Int) -> Void
    private let state = Locked(State())
    /// Our sender reports' compact NTP times, for RTT from LSR/DLSR (RFC 3550 §6.4.1).
    private let sentReports = Locked<[UInt32: Int64]>([:])
    public static let keyframeInterval: Int64 = 300_000
    /// The interval while a receiver keeps asking.
    public static let repeatedKeyframeInterval: Int64 = 1_000_000

    /// How a receiver's honoured keyframe request reaches the encoder.
    public enum KeyframeAsk: Sendable, Equatable {
        /// Make the next frame a keyframe.
        case keyframe
        /// The receiver asked again after two keyframes went out within 2 s: they did not get
        /// through (a keyframe is many packets; on a lossy or narrow path one of them is lost).
        /// The next keyframe should be smaller.
        case keyframeDidNotGetThrough
    }

    /// `video`: the streams we send, one or a simulcast screen's layers (best first); a PLI, FIR
    /// or NACK goes to the layer whose SSRC it names, and `requestKeyframe` hears which.
    public init(
        video: [RTPStreamSender], audioSSRC: UInt32?,
        requestKeyframe: @escaping @Sendable (KeyframeAsk, _ layer: Int) -> Void
    ) {
        self.video = video
        var layers: [UInt32: Int] = [:]
        for (index, sender) in video.enumerated() {
            layers[sender.configuration.ssrc] = index
            if let rtx = sender.configuration.rtx { layers[rtx.ssrc] = index }
        }
        videoLayers = layers
        self.audioSSRC = audioSSRC
        self.requestKeyframe = requestKeyframe
    }

    /// One video stream (or none).
    public convenience init(
        video: RTPStreamSender?, audioSSRC: UInt32?, requestKeyframe: @escaping @Sendable (KeyframeAsk) -> Void
    ) {
        self.init(video: video.map { [$0] } ?? [], audioSSRC: audioSSRC) { ask, _ in requestKeyframe(ask) }
    }

    private var videoSSRCs: Dictionary<UInt32, Int>.Keys { videoLayers.keys }

    /// Remember that a sender report with this compact NTP time left at `nowMicros`.
    public func senderReportSent(compactNTP: UInt32, nowMicros: Int64) {
        sentReports.withLock { reports in
            reports[compactNTP] = nowMicros
            if reports.count > 32 { reports.removeValue(forKey: reports.min { $0.value < $1.value }!.key) }
        }
    }

    public var figures: Figures { state.withLock { $0.figures } }

    public func receive(_ bytes: [UInt8], nowMicros: Int64) {
        let packets: [RTCPPacket]
        do {
            packets = try RTCPCompound.parse(bytes)
        } catch {
            state.withLock {
                $0.figures.malformed += 1; $0.figures.lastError = "\(error)"
            }
            return
        }
        firstHeard(packets, nowMicros: nowMicros)
        for packet in packets {
            switch packet {
            case .pictureLossIndication(let pli):
                guard let layer = videoLayers[pli.mediaSSRC] else { continue }
                state.withLock { $0.figures.pli += 1 }
                keyframe(layer: layer, nowMicros: nowMicros)
            case .fullIntraRequest(let fir):
                for entry in fir.entries {
                    guard let layer = videoLayers[entry.ssrc] else { continue }
                    // A FIR repeated with the same sequence number is one request (RFC 5104 §4.3.1.2).
                    let isNew = state.withLock { s -> Bool in
                        defer { s.lastFIRSequence[entry.ssrc] = entry.sequenceNumber }
                        return s.lastFIRSequence[entry.ssrc] != entry.sequenceNumber
                    }
                    if isNew {
                        state.withLock { $0.figures.fir += 1 }
                        keyframe(layer: layer, nowMicros: nowMicros)
                    }
                }
            case .genericNACK(let nack):
                guard let layer = videoLayers[nack.mediaSSRC], video[layer].configuration.ssrc == nack.mediaSSRC
                else { continue }
                state.withLock { $0.figures.nacks += 1 }
                let rtt = state.withLock { $0.figures.rttMs }.map { Int64($0 * 1000) }
                video[layer].retransmit(nack.lostSequenceNumbers, nowMicros: nowMicros, rttMicros: rtt)
            case .receiverReport(let rr):
                apply(rr.reports, nowMicros: nowMicros)
            case .senderReport(let sr):
                apply(sr.reports, nowMicros: nowMicros)
            case .receiverEstimatedMaxBitrate(let remb):
                state.withLock { $0.figures.remb = Int(clamping: remb.bitrate) }
            default:
                continue
            }
        }
    }

    /// The receiver's first RTCP: a keyframe on every layer, unless this very compound asks for one,
    /// or it is transport-wide feedback that shows our first packet (transport-wide number 0)
    /// arrived: the receiver could decrypt from the start, so the first keyframe reached it (or is
    /// repaired by NACK), and a second one would only double the start's burst on a slow link.
    private func firstHeard(_ packets: [RTCPPacket], nowMicros: Int64) {
        guard !video.isEmpty else { return }
        let asks = packets.contains { packet in
            switch packet {
            case .pictureLossIndication(let pli): return videoLayers[pli.mediaSSRC] != nil
            case .fullIntraRequest(let fir): return fir.entries.contains { videoLayers[$0.ssrc] != nil }
            case .transportWideFeedback(let feedback): return Self.showsTheStart(feedback)
            default: return false
            }
        }
        let first = state.withLock { s -> Bool in
            guard !s.heard else { return false }
            s.heard = true
            guard !asks else { return false }
            // A request right after it waits out the usual 300 ms; it is not one of the receiver's.
            for layer in video.indices { s.lastKeyframeMicros[layer] = nowMicros }
            s.figures.keyframeOnFirstReport = true
            return true
        }
        if first { for layer in video.indices { requestKeyframe(.keyframe, layer) } }
    }

    /// Transport-wide feedback reporting our first packet (number 0) as received.
    public static func showsTheStart(_ feedback: TransportWideFeedback) -> Bool {
        guard feedback.baseSequenceNumber == 0, let first = feedback.statuses.first else { return false }
        return first != .notReceived
    }

    /// A receiver's request for `layer`, within that layer's own rate limit.
    private func keyframe(layer: Int, nowMicros: Int64) {
        let ask = state.withLock { s -> KeyframeAsk? in
            // The first request always goes (subtracting from a `.min` sentinel overflowed and trapped).
            var answered = s.keyframesAnswered[layer] ?? []
            answered.removeAll { nowMicros - $0 > 2_000_000 }
            defer { s.keyframesAnswered[layer] = answered }
            let interval = answered.count >= 2 ? Self.repeatedKeyframeInterval : Self.keyframeInterval
            if let last = s.lastKeyframeMicros[layer], nowMicros - last < interval { return nil }
            let again = answered.count >= 2
            s.lastKeyframeMicros[layer] = nowMicros
            answered.append(nowMicros)
            s.figures.keyframesAsked += 1
            if again { s.figures.smallerKeyframesAsked += 1 }
            return again ? .keyframeDidNotGetThrough : .keyframe
        }
        if let ask { requestKeyframe(ask, layer) }
    }

    private func apply(_ reports: [ReceptionReport], nowMicros: Int64) {
        for report in reports where videoSSRCs.contains(report.ssrc) || report.ssrc == audioSSRC {
            var rtt: Double?
            if report.lastSenderReport != 0, let sentAt = sentReports.withLock({ $0[report.lastSenderReport] }) {
                // Round trip = now − sent − the receiver's hold time (DLSR, in 1/65536 s).
                let held = Double(report.delaySinceLastSenderReport) / 65536 * 1_000_000
                rtt = max(0, (Double(nowMicros - sentAt) - held) / 1000)
            }
            state.withLock { s in
                if let rtt { s.figures.rttMs = rtt }
                if videoSSRCs.contains(report.ssrc) { s.figures.fractionLost = Double(report.fractionLost) / 256 }
            }
        }
    }
}
