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
        var lastKeyframeMicros: Int64?
        var keyframesAnswered: [Int64] = []
        var lastFIRSequence: [UInt32: UInt8] = [:]
        var heard = false
    }

    private let video: RTPStreamSender?
    private let videoSSRCs: Set<UInt32>
    private let audioSSRC: UInt32?
    private let requestKeyframe: @Sendable (KeyframeAsk) -> Void
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

    public init(
        video: RTPStreamSender?, audioSSRC: UInt32?, requestKeyframe: @escaping @Sendable (KeyframeAsk) -> Void
    ) {
        self.video = video
        var ssrcs: Set<UInt32> = []
        if let video {
            ssrcs.insert(video.configuration.ssrc); if let rtx = video.configuration.rtx { ssrcs.insert(rtx.ssrc) }
        }
        videoSSRCs = ssrcs
        self.audioSSRC = audioSSRC
        self.requestKeyframe = requestKeyframe
    }

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
            case .pictureLossIndication(let pli) where videoSSRCs.contains(pli.mediaSSRC):
                state.withLock { $0.figures.pli += 1 }
                keyframe(nowMicros: nowMicros)
            case .fullIntraRequest(let fir):
                for entry in fir.entries where videoSSRCs.contains(entry.ssrc) {
                    // A FIR repeated with the same sequence number is one request (RFC 5104 §4.3.1.2).
                    let isNew = state.withLock { s -> Bool in
                        defer { s.lastFIRSequence[entry.ssrc] = entry.sequenceNumber }
                        return s.lastFIRSequence[entry.ssrc] != entry.sequenceNumber
                    }
                    if isNew {
                        state.withLock { $0.figures.fir += 1 }
                        keyframe(nowMicros: nowMicros)
                    }
                }
            case .genericNACK(let nack) where videoSSRCs.contains(nack.mediaSSRC):
                state.withLock { $0.figures.nacks += 1 }
                let rtt = state.withLock { $0.figures.rttMs }.map { Int64($0 * 1000) }
                video?.retransmit(nack.lostSequenceNumbers, nowMicros: nowMicros, rttMicros: rtt)
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

    /// The receiver's first RTCP: a keyframe, unless this very compound asks for one.
    private func firstHeard(_ packets: [RTCPPacket], nowMicros: Int64) {
        guard video != nil else { return }
        let asks = packets.contains { packet in
            switch packet {
            case .pictureLossIndication(let pli): return videoSSRCs.contains(pli.mediaSSRC)
            case .fullIntraRequest(let fir): return fir.entries.contains { videoSSRCs.contains($0.ssrc) }
            default: return false
            }
        }
        let first = state.withLock { s -> Bool in
            guard !s.heard else { return false }
            s.heard = true
            guard !asks else { return false }
            // A request right after it waits out the usual 300 ms; it is not one of the receiver's.
            s.lastKeyframeMicros = nowMicros
            s.figures.keyframeOnFirstReport = true
            return true
        }
        if first { requestKeyframe(.keyframe) }
    }

    private func keyframe(nowMicros: Int64) {
        let ask = state.withLock { s -> KeyframeAsk? in
            // The first request always goes (subtracting from a `.min` sentinel overflowed and trapped).
            s.keyframesAnswered.removeAll { nowMicros - $0 > 2_000_000 }
            let interval = s.keyframesAnswered.count >= 2 ? Self.repeatedKeyframeInterval : Self.keyframeInterval
            if let last = s.lastKeyframeMicros, nowMicros - last < interval { return nil }
            let again = s.keyframesAnswered.count >= 2
            s.lastKeyframeMicros = nowMicros
            s.keyframesAnswered.append(nowMicros)
            s.figures.keyframesAsked += 1
            if again { s.figures.smallerKeyframesAsked += 1 }
            return again ? .keyframeDidNotGetThrough : .keyframe
        }
        if let ask { requestKeyframe(ask) }
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
