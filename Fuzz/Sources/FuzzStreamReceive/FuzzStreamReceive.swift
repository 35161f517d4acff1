// libFuzzer target for the per-stream receive state (Sources/CallsClient, linked here as source):
// AudioJitterBuffer, TransportFeedbackRecorder, ReceptionStatistics and RTPRouter, fed one script.
// The first byte picks the router's sections; then each step is four bytes:
//   op & 3 != 3  a packet: seq += Int8(b1), time += b2 ms, transport-wide seq += b3 & 7 (bit 3 of
//                b3: back by 3), op bit 2: the timestamp jumps, bits 4-6: SSRC and payload type
//                choice, bit 7: a MID header extension naming section b3 >> 4 & 3
//   op & 3 == 3  a pull every 20 ms for b2 / 8 steps, TWCC feedback and a receiver report
// Checks: the jitter buffer accounts for every packet (played, dropped for overflow or at an
// epoch change, or held),
// never holds more than its target plus the overflow margin, and plays in sequence order between
// underruns; TWCC feedback serializes and parses back equal, reports each number as received
// once at most, and leaves nothing waiting; reception statistics never report a sequence number
// going backwards, and the report block survives the wire; the router only routes to a section
// it has, keeps a learned SSRC's route, and marks as RTX only a section's RTX payload type.
import RTPWire
import ScriptInput
import VideoSend

private let ssrcs: [UInt32] = [0xA1, 0xA2, 0xB1, 0xB2, 0xC1, 0x5EED, 0xDEAD, 0xA1]
private let payloadTypes: [UInt8] = [111, 96, 97, 98, 99, 100, 111, 96]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var script = ScriptInput(start, count)
    let origin = ContinuousClock.Instant.now
    var nowMicros: Int64 = 0
    var now: ContinuousClock.Instant { origin + .microseconds(nowMicros) }

    // The router: three sections, SSRCs announced or not as the first byte says.
    let shape = script.byte()
    let mids = ["0", "1", "2"]
    let entries = [
        RTPRouter.Entry(
            index: 0, mid: mids[0], payloadType: 111, rtxPayloadType: nil,
            ssrc: shape & 1 != 0 ? 0xA1 : nil, rtxSSRC: nil),
        RTPRouter.Entry(
            index: 1, mid: mids[1], payloadType: 96, rtxPayloadType: 97,
            ssrc: shape & 2 != 0 ? 0xB1 : nil, rtxSSRC: shape & 2 != 0 ? 0xB2 : nil),
        RTPRouter.Entry(
            index: 2, mid: mids[2], payloadType: shape & 4 != 0 ? 96 : 98, rtxPayloadType: 99,
            ssrc: nil, rtxSSRC: nil)
    ]
    var router = RTPRouter(entries: entries, midExtensionID: shape & 8 != 0 ? 4 : nil)
    if shape & 16 != 0 {
        // A renegotiation that drops section 2 and keeps the rest.
        router = RTPRouter(entries: Array(entries.prefix(2)), midExtensionID: router.midExtensionID).following(router)
    }
    let sections = Set(entries.map(\.index))
    var learned: [UInt32: RTPRouter.Route] = [:]

    var jitter = AudioJitterBuffer<UInt16>()
    var lastPlayed: UInt16?
    var underruns = 0
    var epochs = 0
    var recorder = TransportFeedbackRecorder()
    var transportSequence: UInt16 = 0xFFF8
    var reported = Set<Int64>()
    var reportBase: Int64?
    var statistics = ReceptionStatistics(ssrc: 0xA1, clockRate: 48_000)
    var highest: UInt32?
    var sequence: UInt16 = 0xFF00
    var timestamp: UInt32 = 0

    var steps = 0
    while !script.atEnd, steps < 2000 {
        steps += 1
        let op = script.byte(), b1 = script.byte(), b2 = script.byte(), b3 = script.byte()
        if op & 3 != 3 {
            nowMicros += Int64(b2) * 1000
            sequence = sequence &+ UInt16(bitPattern: Int16(Int8(bitPattern: b1)))
            timestamp &+= op & 4 != 0 ? 0x4000_0000 : 960
            let choice = Int(op >> 4 & 7)
            var packet = RTPPacket(
                payloadType: payloadTypes[choice], sequenceNumber: sequence, timestamp: timestamp,
                ssrc: ssrcs[choice], payload: [0xFC, b1, b2])
            if op & 0x80 != 0, let id = router.midExtensionID {
                let mid = b3 >> 4 & 3 == 3 ? "9" : mids[Int(b3 >> 4 & 3)]
                packet.headerExtension = try? RTPHeaderExtension(elements: [
                    HeaderExtensionElement(id: id, data: Array(mid.utf8))
                ])
            }

            if let route = router.route(packet) {
                check(sections.contains(route.index), "routed to section \(route.index), which does not exist")
                if let earlier = learned[packet.ssrc] { check(earlier == route, "SSRC \(packet.ssrc) changed route") }
                learned[packet.ssrc] = route
                let entry = entries[route.index]
                if route.isRTX { check(entry.rtxPayloadType != nil, "RTX on section \(route.index), which has none") }
            } else {
                check(learned[packet.ssrc] == nil, "SSRC \(packet.ssrc) lost its route")
            }

            if packet.ssrc == 0xA1 {
                jitter.insert(sequence: sequence, payload: sequence, now: now)
                check(
                    jitter.held <= jitter.target + AudioJitterBuffer<UInt16>.overflowMargin,
                    "the jitter buffer holds \(jitter.held)")
                statistics.received(sequenceNumber: sequence, timestamp: timestamp, bytes: 3, arrivalMicros: nowMicros)
                check(statistics.packetsReceived > 0 && statistics.expected > 0, "statistics lost count")
            }

            transportSequence = b3 & 8 != 0 ? transportSequence &- 3 : transportSequence &+ UInt16(b3 & 7)
            recorder.received(sequence: transportSequence, arrivalMicros: nowMicros)
        } else {
            for _ in 0..<Int(b2 / 8) {
                nowMicros += 20_000
                let pulled = jitter.pull(now: now)
                if jitter.counters.underruns != underruns { underruns = jitter.counters.underruns; lastPlayed = nil }
                if jitter.counters.epochs != epochs { epochs = jitter.counters.epochs; lastPlayed = nil }
                if case .frame(let played) = pulled {
                    if let lastPlayed { check(played != lastPlayed, "frame \(played) played twice in a row") }
                    lastPlayed = played
                }
                let c = jitter.counters
                check(
                    c.inserted == c.played + c.droppedOverflow + c.droppedEpoch
                        + Int(jitter.held / AudioJitterBuffer<UInt16>.frameDuration),
                    "jitter buffer packets unaccounted for: \(c), \(jitter.held) held")
                check(
                    jitter.target == AudioJitterBuffer<UInt16>.baseDelay
                        || jitter.target == AudioJitterBuffer<UInt16>.raisedDelay,
                    "a target delay of \(jitter.target)")
            }

            for message in recorder.feedback(senderSSRC: 1, mediaSSRC: 2) {
                let wire: [UInt8]
                do { wire = try message.serialize() } catch { fatalError("TWCC feedback does not serialize: \(error)") }
                check((try? TransportWideFeedback.parse(wire)) == message, "TWCC feedback does not survive the wire")
                let base = TransportFeedbackAdapter.unwrap(message.baseSequenceNumber, near: reportBase)
                reportBase = base
                for (offset, status) in message.statuses.enumerated() {
                    guard case .received = status else { continue }
                    let number = base + Int64(offset)
                    check(reported.insert(number).inserted, "transport-wide number \(number) reported received twice")
                }
            }
            check(recorder.waiting == 0, "arrivals left waiting after feedback")

            let block = statistics.report(nowMicros: nowMicros)
            if let highest {
                check(block.extendedHighestSequenceNumber >= highest, "the extended highest sequence went back")
            }
            highest = block.extendedHighestSequenceNumber
            let report = ReceiverReport(ssrc: 9, reports: [block])
            if let wire = try? report.serialize(), case .receiverReport(let back)? = try? RTCPPacket.parse(wire) {
                check(
                    back.reports.first?.extendedHighestSequenceNumber == block.extendedHighestSequenceNumber
                        && back.reports.first?.fractionLost == block.fractionLost, "a report block changed on the wire")
            } else {
                fatalError("a receiver report does not survive the wire")
            }
        }
    }
    return 0
}
