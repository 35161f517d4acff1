import Foundation
import GLibLoop
import RTPWire
import ShareCore
import Synchronization
import VideoSend

/// The per-packet side of a peer connection, between the transport and the transceivers' media:
/// incoming RTP is routed (`RTPRouter`) to its transceiver; incoming RTCP goes to every sending
/// transceiver's `RTCPReceiver` and its sender reports to the receiving ones; every second our
/// sender reports (SR + SDES) and receiver reports (RR + SDES) leave; every 100 ms each video
/// receiver that waits for a keyframe may send a PLI (at most once per 300 ms), and transport-wide
/// feedback on what arrived leaves; every 20 ms each video receiver that negotiated `nack` asks
/// for its missing packets (generic NACK). What we send goes
/// through the `CongestionController`'s pacer; transport-wide feedback and REMB go to its estimate,
/// and each second its target to the encoders.
///
/// Thread-safe. The transport's handlers and both timers run on the GLib loop thread; `configure`
/// and `stop` come from the peer connection's actor.
final class CallLegMedia: Sendable {
    struct Counters: Sendable, Equatable {
        var rtpMalformed = 0
        var rtpUnrouted = 0
        var rtcpMalformed = 0
        var senderReportsSent = 0
        var receiverReportsSent = 0
        var plisSent = 0
        var nacksSent = 0
        var transportFeedbackSent = 0
    }

    private struct Routing: Sendable {
        var transceivers: [Transceiver] = []
        var router: RTPRouter?
        var counters = Counters()
    }

    let transport: SecureTransport
    let transportSequence = TransportSequenceCounter()
    /// The pacer, the transport stamp and the bandwidth estimate; streams write to its `writer`.
    let congestion: CongestionController
    /// The SSRC our RTCP comes from when no stream of ours is sending (RFC 3550 §6.4.2).
    let rtcpSSRC = UInt32.random(in: 1...UInt32.max)
    let cname: String
    private let loop: GLibLoop
    private let routing = Locked(Routing())
    private let timers = Locked<[GLibTimer]>([])
    /// Arrival times of what we receive, for the transport-wide feedback we send every 100 ms.
    private let arrivals = Locked(TransportFeedbackRecorder())

    init(transport: SecureTransport, loop: GLibLoop, cname: String, logger: Logger) {
        self.transport = transport
        self.loop = loop
        self.cname = cname
        congestion = CongestionController(transportSequence: transportSequence, logger: logger) { [transport] in
            transport.sendRTP($0)
        }
    }

    var counters: Counters { routing.withLock { $0.counters } }

    /// Called when an exchange is complete (again after each renegotiation): the transceivers (with their media) and the router
    /// for what they receive, told what the last one knew (`RTPRouter.following`). Starts the
    /// report and PLI timers. `iceFailed` hears, once, that ICE failed after connecting (consent
    /// lost): the reports timer looks each second.
    func configure(transceivers: [Transceiver], router: RTPRouter, iceFailed: @escaping @Sendable (String) -> Void) {
        routing.withLock {
            $0.transceivers = transceivers
            $0.router = router.following($0.router)
        }
        congestion.pacer.start()
        let told = Atomic<Bool>(false)
        let reports = loop.repeating(every: .seconds(1)) { [weak self] in
            guard let self else { return false }
            if case .failed(let reason) = self.transport.ice.state, self.transport.state == .connected,
                !told.exchange(true, ordering: .relaxed)
            {
                iceFailed(reason)
            }
            self.sendReports()
            self.congestion.tick(
                medias: self.routing.withLock { $0.transceivers }.compactMap(\.media),
                nowMicros: Clocks.monotonicMicros())
            return true
        }
        let keyframes = loop.repeating(every: .milliseconds(100)) { [weak self] in
            guard let self else { return false }
            self.sendKeyframeRequests()
            self.sendTransportFeedback()
            return true
        }
        let nacks = loop.repeating(every: .milliseconds(Int(RetransmissionTiming.minimumRetryMicros / 1000))) {
            [weak self] in
            guard let self else { return false }
            self.sendNegativeAcknowledgements()
            return true
        }
        let replaced = timers.withLock { t in
            defer { t = [reports, keyframes, nacks] }
            return t
        }
        for timer in replaced { timer.cancel() }
    }

    func stop() {
        timers.withLock { t in
            for timer in t { timer.cancel() }
            t = []
        }
        congestion.pacer.stop()
    }

    // MARK: Incoming (loop thread)

    func receiveRTP(_ bytes: [UInt8]) {
        let now = Clocks.monotonicMicros()
        guard let packet = try? RTPPacket.parse(bytes) else {
            routing.withLock { $0.counters.rtpMalformed += 1 }
            return
        }
        let target = routing.withLock { r -> (Transceiver, Bool)? in
            guard let route = r.router?.route(packet), route.index < r.transceivers.count else {
                r.counters.rtpUnrouted += 1
                return nil
            }
            return (r.transceivers[route.index], route.isRTX)
        }
        guard let (transceiver, isRTX) = target else { return }
        if let id = transceiver.media?.negotiated.extensions.transportSequence,
            let element = try? packet.headerExtensionElements().first(where: { $0.id == id }), element.data.count == 2
        {
            let sequence = UInt16(element.data[0]) << 8 | UInt16(element.data[1])
            arrivals.withLock { $0.received(sequence: sequence, arrivalMicros: now) }
        }
        transceiver.media?.receive(packet, isRTX: isRTX, size: bytes.count, nowMicros: now)
    }

    func receiveRTCP(_ bytes: [UInt8]) {
        let now = Clocks.monotonicMicros()
        let transceivers = routing.withLock { $0.transceivers }
        let medias = transceivers.compactMap(\.media)
        for media in medias { media.rtcp?.receive(bytes, nowMicros: now) }
        guard let packets = try? RTCPCompound.parse(bytes) else {
            routing.withLock { $0.counters.rtcpMalformed += 1 }
            return
        }
        congestion.receive(
            packets, medias: medias, rttMs: medias.lazy.compactMap { $0.rtcp?.figures.rttMs }.first, nowMicros: now)
        for case .senderReport(let report) in packets {
            for media in medias where media.senderReportReceived(report, nowMicros: now) { break }
        }
    }

    func congestionStatistics() -> CongestionStatistics {
        congestion.statistics(
            medias: routing.withLock { $0.transceivers }.compactMap(\.media), nowMicros: Clocks.monotonicMicros())
    }

    // MARK: Outgoing (loop thread)

    private func sendReports() {
        let medias = routing.withLock { $0.transceivers }.compactMap(\.media)
        let now = Clocks.monotonicMicros()
        let ntp = NTPTimestamp(sinceEpoch: .milliseconds(Int64(Clocks.wallMillis())) + .seconds(2_208_988_800))
        // Sender reports (with our CNAME) for what we send.
        var packets: [RTCPPacket] = []
        var reporting: [TransceiverMedia] = []
        for media in medias {
            // One report per stream: a simulcast screen's layers each have theirs.
            var reported = false
            for sender in media.senders {
                guard let report = sender.senderReport(nowMicros: now, ntp: ntp) else { continue }
                packets.append(.senderReport(report))
                packets.append(.sourceDescription(SourceDescription(source: sender.configuration.ssrc, cname: cname)))
                reported = true
            }
            if reported { reporting.append(media) }
        }
        if !packets.isEmpty, let bytes = try? RTCPCompound.serialize(packets), transport.sendRTCP(bytes) {
            for media in reporting { media.rtcp?.senderReportSent(compactNTP: ntp.compact, nowMicros: now) }
            routing.withLock { $0.counters.senderReportsSent += 1 }
        }
        // Receiver reports for what we receive.
        let blocks = medias.compactMap { $0.receptionReport(nowMicros: now) }
        guard !blocks.isEmpty else { return }
        let ssrc = reportingSSRC(medias)
        let rr: [RTCPPacket] = [
            .receiverReport(ReceiverReport(ssrc: ssrc, reports: blocks)),
            .sourceDescription(SourceDescription(source: ssrc, cname: cname))
        ]
        if let bytes = try? RTCPCompound.serialize(rr), transport.sendRTCP(bytes) {
            routing.withLock { $0.counters.receiverReportsSent += 1 }
        }
    }

    private func sendKeyframeRequests() {
        let medias = routing.withLock { $0.transceivers }.compactMap(\.media)
        let now = Clocks.monotonicMicros()
        let ssrc = reportingSSRC(medias)
        for media in medias {
            guard let pli = media.pictureLossIndication(senderSSRC: ssrc, nowMicros: now) else { continue }
            if let bytes = try? RTCPCompound.serialize([.pictureLossIndication(pli)]), transport.sendRTCP(bytes) {
                routing.withLock { $0.counters.plisSent += 1 }
            }
        }
    }

    /// Generic NACKs (RTPFB FMT=1) for missing video packets, every 20 ms, timed by the round trip
    /// our sender reports measured when we send anything on this leg.
    private func sendNegativeAcknowledgements() {
        let medias = routing.withLock { $0.transceivers }.compactMap(\.media)
        guard medias.contains(where: { $0.receivesWithNACK }) else { return }
        let now = Clocks.monotonicMicros()
        let ssrc = reportingSSRC(medias)
        let rtt = medias.lazy.compactMap { $0.rtcp?.figures.rttMs }.first.map { Int64($0 * 1000) }
        for media in medias where media.receivesWithNACK {
            guard let nack = media.negativeAcknowledgement(senderSSRC: ssrc, nowMicros: now, rttMicros: rtt),
                let bytes = try? RTCPCompound.serialize([.genericNACK(nack)]), transport.sendRTCP(bytes)
            else { continue }
            routing.withLock { $0.counters.nacksSent += 1 }
        }
    }

    /// Transport-wide feedback for what arrived since the last (RTPFB FMT=15), when the sender
    /// stamps transport-wide sequence numbers.
    private func sendTransportFeedback() {
        let medias = routing.withLock { $0.transceivers }.compactMap(\.media)
        let media = medias.lazy.compactMap { $0.remoteMediaSSRC }.first ?? 0
        let messages = arrivals.withLock { $0.feedback(senderSSRC: reportingSSRC(medias), mediaSSRC: media) }
        for message in messages {
            if let bytes = try? RTCPCompound.serialize([.transportWideFeedback(message)]), transport.sendRTCP(bytes) {
                routing.withLock { $0.counters.transportFeedbackSent += 1 }
            }
        }
    }

    private func reportingSSRC(_ medias: [TransceiverMedia]) -> UInt32 {
        medias.lazy.compactMap { $0.sender?.configuration.ssrc }.first ?? rtcpSSRC
    }
}
