// libFuzzer target for the video receive side's state machines (Sources/CallsClient/Receive,
// linked here as source), fed one script three ways. Each step is four bytes or more:
//   op & 3 == 0, 1  a packet: seq += Int8(b1), time += b2 ms, payload from op's upper bits
//                   (bit 2: frame start, bit 3: keyframe, bit 4: marker, bit 5: raw payload of b3 & 15
//                   bytes from the script, bit 6: the other SSRC, bit 7: timestamp advances)
//   op & 3 == 2     release / due now; time += b2 * 4 ms
//   op & 3 == 3     the round trip changes to b1 ms; time += b2 ms
// VideoReorderBuffer (capacity 64): after a release nothing more than the capacity is held, what
// comes out in one release is in sequence order apart from a restart's flush, and every packet
// is accounted for (released, late, duplicate or held). NACKGenerator: a number is never asked
// for twice in one round, at most maxTries times in all, never once it has arrived, and never
// more than maxMissing are outstanding. VideoFrameBuffer (VP8): the first frame decoded, the
// first after a failed decode and the first of each run of an SSRC (SSRCs may alternate) are
// keyframes.
import RTPWire
import ScriptInput
import VideoSend

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var script = ScriptInput(start, count)
    let origin = ContinuousClock.Instant.now
    var nowMicros: Int64 = 0
    var now: ContinuousClock.Instant { origin + .microseconds(nowMicros) }
    var sequence: UInt16 = 0xFFF0
    var timestamp: UInt32 = 1000
    var ssrc: UInt32 = 0x1111
    var rtt: Int64 = 50_000

    var reorder = VideoReorderBuffer<Int>(wait: .milliseconds(100), capacity: 64)
    var inserted = 0, releasedOut = 0

    var nack = NACKGenerator()
    var asked: [UInt16: Int] = [:]
    var arrived = Set<UInt16>()
    var nackRestarts = 0

    var frames = VideoFrameBuffer(codec: .vp8, holdMicros: RetransmissionTiming(rttMicros: rtt).holdMicros)
    // Whether the buffer may only decode a keyframe next, per run of one SSRC (an epoch: each
    // change of SSRC starts one; the timestamp's top byte carries it, so frames say their epoch).
    var epoch: UInt32 = 0
    var needKeyframe: [UInt32: Bool] = [0: true]
    var decodeOutcome: UInt8 = 0

    var steps = 0
    while !script.atEnd, steps < 2000 {
        steps += 1
        let op = script.byte(), b1 = script.byte(), b2 = script.byte()
        switch op & 3 {
        case 0, 1:
            nowMicros += Int64(b2) * 1000
            sequence = sequence &+ UInt16(bitPattern: Int16(Int8(bitPattern: b1)))
            if op & 0x80 != 0 { timestamp &+= 3000 }
            if op & 0x40 != 0, epoch < 255 {
                ssrc = ssrc == 0x1111 ? 0x2222 : 0x1111
                epoch += 1
                needKeyframe[epoch] = true
            }
            let payload: [UInt8]
            if op & 0x20 != 0 {
                payload = script.take(Int(script.byte() & 15))
            } else {
                payload = vp8Payload(start: op & 0x04 != 0, keyframe: op & 0x08 != 0)
            }
            let packet = RTPPacket(
                marker: op & 0x10 != 0, payloadType: 96, sequenceNumber: sequence,
                timestamp: timestamp & 0xFF_FFFF | epoch << 24, ssrc: ssrc,
                payload: payload)

            reorder.insert(sequence: sequence, inserted, now: now)
            inserted += 1

            let before = nack.restarts
            let wasMissing = nack.received(sequence, nowMicros: nowMicros)
            if nack.restarts != before { nackRestarts += 1; asked = [:]; arrived = [] }
            if wasMissing { check(asked[sequence] != nil || !arrived.contains(sequence), "a packet recovered twice") }
            arrived.insert(sequence)
            asked[sequence] = nil

            frames.insert(packet, now: now)
        case 2:
            nowMicros += Int64(b2) * 4000
            let out = reorder.release(now: now)
            releasedOut += out.count
            check(
                reorder.count <= reorder.capacity,
                "the reorder buffer holds \(reorder.count) after a release (capacity \(reorder.capacity))")
            let c = reorder.counters
            check(releasedOut == c.released, "released \(releasedOut), counted \(c.released)")
            check(
                inserted == c.released + c.droppedLate + c.droppedDuplicate + reorder.count,
                "packets unaccounted for: \(inserted) in, \(c) and \(reorder.count) held")
            check(
                (reorder.nextDeadline == nil) == (reorder.count == 0),
                "a deadline with nothing held, or none with something")

            let timing = RetransmissionTiming(rttMicros: rtt)
            let due = nack.due(nowMicros: nowMicros, timing: timing)
            check(Set(due).count == due.count, "a number asked for twice in one round: \(due)")
            for number in due {
                check(!arrived.contains(number) || asked[number] != nil, "asked for \(number), which arrived")
                asked[number, default: 0] += 1
                check(
                    asked[number]! <= NACKGenerator.maxTries,
                    "asked for \(number) more than \(NACKGenerator.maxTries) times")
            }
            check(nack.missingCount <= NACKGenerator.maxMissing, "\(nack.missingCount) missing numbers kept")

            decodeOutcome = b1
            frames.release(now: now) { frame in
                let from = frame.timestamp >> 24
                if needKeyframe[from] == true {
                    check(frame.isKeyframe, "a delta frame decoded while a keyframe was needed")
                }
                decodeOutcome = decodeOutcome >> 2 | decodeOutcome << 6
                switch decodeOutcome & 3 {
                case 0: if frame.isKeyframe { needKeyframe[from] = false }; return .picture
                case 1: return .nothing
                default: for key in needKeyframe.keys { needKeyframe[key] = true }; return .failed
                }
            }
            if frames.waitingForKeyframe { needKeyframe[epoch] = true }
        default:
            rtt = Int64(b1) * 1000
            frames.holdMicros = RetransmissionTiming(rttMicros: rtt).holdMicros
            nowMicros += Int64(b2) * 1000
        }
    }
    let drained = reorder.drain()
    check(reorder.count == 0 && releasedOut + drained.count == reorder.counters.released, "drain left packets behind")
    return 0
}

/// A VP8 payload (RFC 7741): the descriptor, then for a frame's first packet the frame tag
/// (a keyframe's with its start code and a 64×64 size), then a few bytes of data.
private func vp8Payload(start: Bool, keyframe: Bool) -> [UInt8] {
    guard start else { return [0x00, 0xAA, 0xBB] }
    if keyframe { return [0x10, 0x50, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x00, 0x40, 0x00, 0xCC] }
    return [0x10, 0x51, 0x00, 0x00, 0xDD]
}
