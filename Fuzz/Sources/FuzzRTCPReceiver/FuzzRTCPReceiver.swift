// libFuzzer target for RTCPReceiver (Sources/CallsClient/Share, linked here as source) in front of
// a real RTPStreamSender (video SSRC 0x1234, RTX 0x5678) that has sent 300 packets. The input is
// a script of RTCP compounds: two bytes of milliseconds to wait, a length byte, that many bytes.
// Checks: a compound counts as malformed exactly when RTCPCompound refuses it; keyframes are asked
// for at most once per 300 ms, for a PLI or FIR, and once for the receiver's first well-formed
// compound when that asks for none; every retransmission is of a number a NACK asked for and the
// sender still holds, wrapped in RTX; the round trip is never negative and the loss fraction stays
// in [0, 1).
import RTPWire
import ScriptInput
import ShareCore
import Synchronization
import VideoSend

private final class Outbox: Sendable {
    let packets = Locked<[RTPPacket]>([])
    let keyframeTimes = Locked<[Int64]>([])
    let clock = Atomic<Int64>(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var script = ScriptInput(start, count)
    let outbox = Outbox()
    let configuration = RTPStreamSender.Configuration(
        ssrc: 0x1234, payloadType: 96, clockRate: 90_000, rtx: (0x5678, 97))
    let sender = RTPStreamSender(configuration: configuration, firstSequence: 0xFF00, firstRTXSequence: 0) {
        outgoing, _ in
        outbox.packets.withLock { $0.append(outgoing.packet) }
        return true
    }
    var nowMicros: Int64 = 1_000_000
    for frame in 0..<100 {
        let units = (0..<3).map {
            RTPPayloadUnit(payload: [UInt8(truncatingIfNeeded: frame), UInt8($0)], marker: $0 == 2)
        }
        sender.send(units, timestamp: UInt32(frame) * 3000, nowMicros: nowMicros)
        nowMicros += 10_000
    }
    let sent = Set(
        outbox.packets.withLock { packets in
            defer { packets = [] }; return packets.map(\.sequenceNumber)
        })
    let receiver = RTCPReceiver(video: sender, audioSSRC: 0xA0) { _ in
        let now = outbox.clock.load(ordering: .relaxed)
        outbox.keyframeTimes.withLock { $0.append(now) }
    }
    receiver.senderReportSent(compactNTP: 0x0001_0000, nowMicros: nowMicros)

    var malformed = 0, pliAndFIR = 0
    var firstAsksNone: Bool?
    var requested = Set<UInt16>()
    while !script.atEnd {
        nowMicros += Int64(script.uint16()) * 1000
        outbox.clock.store(nowMicros, ordering: .relaxed)
        let bytes = script.take(Int(script.byte()))
        let packets = try? RTCPCompound.parse(bytes)
        if packets == nil { malformed += 1 }
        if let packets, firstAsksNone == nil {
            firstAsksNone = !packets.contains {
                switch $0 {
                case .pictureLossIndication(let pli): return pli.mediaSSRC == 0x1234 || pli.mediaSSRC == 0x5678
                case .fullIntraRequest(let fir): return fir.entries.contains { $0.ssrc == 0x1234 || $0.ssrc == 0x5678 }
                // feedback that shows our first packet arrived: the receiver has the start
                case .transportWideFeedback(let feedback):
                    return feedback.baseSequenceNumber == 0
                        && feedback.statuses.first.map { $0 != .notReceived } == true
                default: return false
                }
            }
        }
        for packet in packets ?? [] {
            switch packet {
            case .genericNACK(let nack) where nack.mediaSSRC == 0x1234 || nack.mediaSSRC == 0x5678:
                requested.formUnion(nack.lostSequenceNumbers)
            case .pictureLossIndication, .fullIntraRequest: pliAndFIR += 1
            default: break
            }
        }
        receiver.receive(bytes, nowMicros: nowMicros)

        let figures = receiver.figures
        check(
            figures.malformed == malformed,
            "\(figures.malformed) compounds counted malformed, RTCPCompound refused \(malformed)")
        check(
            figures.keyframesAsked <= pliAndFIR,
            "\(figures.keyframesAsked) keyframes asked for \(pliAndFIR) PLI and FIR")
        if let rtt = figures.rttMs { check(rtt >= 0 && rtt.isFinite, "a round trip of \(rtt) ms") }
        if let loss = figures.fractionLost { check(loss >= 0 && loss < 1, "a loss fraction of \(loss)") }
        for packet in outbox.packets.withLock({ packets in
            defer { packets = [] }; return packets
        }) {
            check(packet.ssrc == 0x5678 && packet.payloadType == 97, "a retransmission not on the RTX stream")
            guard let original = try? RTX.unwrap(packet, originalSSRC: 0x1234, originalPayloadType: 96) else {
                fatalError("a retransmission without its original sequence number")
            }
            check(
                requested.contains(original.sequenceNumber),
                "\(original.sequenceNumber) went again though no NACK asked")
            check(
                sent.contains(original.sequenceNumber), "\(original.sequenceNumber) went again though it was never sent"
            )
        }
    }
    let times = outbox.keyframeTimes.withLock { $0 }
    let figures = receiver.figures
    check(
        times.count == figures.keyframesAsked + (figures.keyframeOnFirstReport ? 1 : 0),
        "keyframe requests and the count disagree")
    check(
        figures.keyframeOnFirstReport == (firstAsksNone == true),
        "the first well-formed compound \(firstAsksNone == true ? "asked for no keyframe" : "asked itself, or none came"), "
            + "the first-report keyframe \(figures.keyframeOnFirstReport ? "was" : "was not") asked")
    for (a, b) in zip(times, times.dropFirst()) {
        check(b - a >= RTCPReceiver.keyframeInterval, "keyframes asked \(b - a) µs apart")
    }
    return 0
}
