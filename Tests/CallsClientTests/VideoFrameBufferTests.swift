import RTPWire
import TestSupport
import Testing
@testable import CallsClient
@testable import CallMedia

/// The video frame buffer on a manual clock: H.264 packets in (SPS, PPS, IDR for a keyframe; two
/// slices for a P-frame), frames out to a decode function that records what it was given.
@Suite struct VideoFrameBufferTests {
    let t = Timeline()
    static let hold: Int64 = 150_000

    /// A keyframe's three packets from `sequence`, timestamp `ts`.
    func keyframe(_ sequence: UInt16, ts: UInt32, ssrc: UInt32 = 7) -> [RTPPacket] {
        [
            packet(sequence, ts, [0x67, 0x42, 0x00, 0x1F], ssrc: ssrc),
            packet(sequence &+ 1, ts, [0x68, 0xCE, 0x38, 0x80], ssrc: ssrc),
            packet(sequence &+ 2, ts, [0x65, 0x88, 0x84, 0x21], marker: true, ssrc: ssrc)
        ]
    }

    /// A P-frame's two packets from `sequence`.
    func pFrame(_ sequence: UInt16, ts: UInt32, ssrc: UInt32 = 7) -> [RTPPacket] {
        [
            packet(sequence, ts, [0x41, 0x9A, 0x01], ssrc: ssrc),
            packet(sequence &+ 1, ts, [0x41, 0x9A, 0x02], marker: true, ssrc: ssrc)
        ]
    }

    func packet(_ sequence: UInt16, _ ts: UInt32, _ payload: [UInt8], marker: Bool = false, ssrc: UInt32) -> RTPPacket {
        RTPPacket(
            marker: marker, payloadType: 102, sequenceNumber: sequence, timestamp: ts, ssrc: ssrc, payload: payload)
    }

    /// Releases at `now`; the timestamps of what went to the decoder, keyframes marked "k".
    func release(_ buffer: inout VideoFrameBuffer, at now: ContinuousClock.Instant) -> [String] {
        var decoded: [String] = []
        buffer.release(now: now) { frame in
            decoded.append(frame.isKeyframe ? "k\(frame.timestamp)" : "\(frame.timestamp)")
            return .picture
        }
        return decoded
    }

    func insert(_ packets: [RTPPacket], into buffer: inout VideoFrameBuffer, at now: ContinuousClock.Instant) {
        for packet in packets { buffer.insert(packet, now: now) }
    }

    @Test func completeFramesGoOnAtOnceAndAHoleFilledInTimeKeepsTheOrder() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        insert(keyframe(10, ts: 0), into: &buffer, at: t(0))
        let got1 = release(&buffer, at: t(0))
        #expect(got1 == ["k0"], "nothing missing: out at once")
        #expect(!buffer.waitingForKeyframe)
        let p1 = pFrame(13, ts: 3000), p2 = pFrame(15, ts: 6000)
        insert([p1[1]] + p2, into: &buffer, at: t(33))  // 13 lost
        let got2 = release(&buffer, at: t(33))
        #expect(got2.isEmpty, "P2 is whole but waits behind P1's hole")
        let got3 = release(&buffer, at: t(100))
        #expect(got3.isEmpty)
        insert([p1[0]], into: &buffer, at: t(120))  // the retransmission
        let got4 = release(&buffer, at: t(120))
        #expect(got4 == ["3000", "6000"])
        #expect(buffer.counters.packetsRecovered == 1 && buffer.counters.framesGivenUp == 0)
        #expect(!buffer.waitingForKeyframe && buffer.nextDeadline == nil)
    }

    @Test func aHoleNeverFilledIsGivenUpThenOnlyAKeyframeDecodes() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        var pli = KeyframeRequestPolicy()
        insert(keyframe(10, ts: 0), into: &buffer, at: t(0))
        let got5 = release(&buffer, at: t(0))
        #expect(got5 == ["k0"])
        let got6 = pli.shouldRequest(waitingForKeyframe: buffer.waitingForKeyframe, nowMicros: 0)
        #expect(!got6)
        let p1 = pFrame(13, ts: 3000)
        insert([p1[1]] + pFrame(15, ts: 6000), into: &buffer, at: t(33))  // 13 never comes
        #expect(buffer.nextDeadline == t(183))
        let got7 = release(&buffer, at: t(182))
        #expect(got7.isEmpty, "still within the hold")
        let got8 = release(&buffer, at: t(183))
        #expect(got8.isEmpty, "given up: P1 lost, P2 refers to it")
        #expect(buffer.counters.packetsGivenUp == 1 && buffer.counters.framesGivenUp == 1)
        #expect(buffer.counters.framesSkippedForKeyframe == 1 && buffer.waitingForKeyframe)
        let got9 = pli.shouldRequest(waitingForKeyframe: buffer.waitingForKeyframe, nowMicros: 183_000)
        #expect(got9, "a PLI")
        let got10 = pli.shouldRequest(waitingForKeyframe: buffer.waitingForKeyframe, nowMicros: 283_000)
        #expect(!got10, "rate limited")
        insert(pFrame(17, ts: 9000), into: &buffer, at: t(200))
        let got11 = release(&buffer, at: t(200))
        #expect(got11.isEmpty, "P-frames wait for the keyframe")
        insert(keyframe(19, ts: 12000) + pFrame(22, ts: 15000), into: &buffer, at: t(260))
        let got12 = release(&buffer, at: t(260))
        #expect(got12 == ["k12000", "15000"])
        #expect(!buffer.waitingForKeyframe && buffer.counters.framesSkippedForKeyframe == 2)
        insert([p1[0]], into: &buffer, at: t(300))  // the lost packet, far too late
        let got13 = release(&buffer, at: t(300))
        #expect(got13.isEmpty && buffer.counters.framesGivenUp == 1)
    }

    @Test func aFrameThatFailsToDecodeAlsoWaitsForAKeyframe() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        insert(keyframe(10, ts: 0) + pFrame(13, ts: 3000) + pFrame(15, ts: 6000), into: &buffer, at: t(0))
        var decoded: [UInt32] = []
        buffer.release(now: t(0)) { frame in
            decoded.append(frame.timestamp)
            return frame.timestamp == 3000 ? .failed : .picture
        }
        #expect(decoded == [0, 3000] && buffer.waitingForKeyframe)
    }

    @Test func sequenceNumbersWrapAround() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        let key = keyframe(65_533, ts: 0)  // 65533, 65534, 65535
        let p1 = pFrame(0, ts: 3000)
        insert(key[0...1] + p1, into: &buffer, at: t(0))
        let got14 = release(&buffer, at: t(50))
        #expect(got14.isEmpty, "65535 missing")
        insert([key[2]], into: &buffer, at: t(60))
        let got15 = release(&buffer, at: t(60))
        #expect(got15 == ["k0", "3000"])
        #expect(buffer.counters.packetsGivenUp == 0 && buffer.counters.restarts == 0)
    }

    @Test func aNewSSRCStartsAfreshAndWaitsForItsKeyframe() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        insert(keyframe(10, ts: 0), into: &buffer, at: t(0))
        let got16 = release(&buffer, at: t(0))
        #expect(got16 == ["k0"])
        let old = pFrame(13, ts: 3000)
        insert([old[1]], into: &buffer, at: t(20))  // 13 missing, held
        // A rebuilt sender: new SSRC, numbering close behind the old one's (not "late").
        insert(pFrame(5, ts: 90_000, ssrc: 8), into: &buffer, at: t(30))
        let got17 = release(&buffer, at: t(30))
        #expect(got17.isEmpty, "no waiting out the old hole; no P-frame before a keyframe")
        #expect(buffer.waitingForKeyframe && buffer.counters.restarts == 1)
        insert(keyframe(7, ts: 93_000, ssrc: 8) + pFrame(10, ts: 96_000, ssrc: 8), into: &buffer, at: t(40))
        let got18 = release(&buffer, at: t(40))
        #expect(got18 == ["k93000", "96000"])
    }

    /// FuzzVideoReceive found this (Fuzz/Regressions/FuzzVideoReceive): with the SSRC changing
    /// twice between releases, the middle stream's P-frame went to the decoder straight after the
    /// first stream's frames, as if it followed them.
    @Test func anSSRCThatComesAndGoesBetweenReleasesWaitsForItsKeyframe() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        insert(keyframe(10, ts: 0), into: &buffer, at: t(0))
        #expect(release(&buffer, at: t(0)) == ["k0"])
        insert(pFrame(13, ts: 3000), into: &buffer, at: t(33))
        // Another stream, briefly, numbered on from the first (no gap for the depayloader to see),
        // then the first one again.
        insert(pFrame(15, ts: 90_000, ssrc: 8), into: &buffer, at: t(34))
        insert(pFrame(17, ts: 6000), into: &buffer, at: t(35))
        #expect(release(&buffer, at: t(35)) == ["3000"], "only the first stream's P-frame follows its keyframe")
        #expect(buffer.waitingForKeyframe && buffer.counters.restarts == 2)
        insert(keyframe(19, ts: 9000), into: &buffer, at: t(40))
        #expect(release(&buffer, at: t(40)) == ["k9000"])
    }

    @Test func aJumpInNumberingIsARestartNotAHole() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        insert(keyframe(10, ts: 0), into: &buffer, at: t(0))
        let got19 = release(&buffer, at: t(0))
        #expect(got19 == ["k0"])
        insert(keyframe(30_000, ts: 3000), into: &buffer, at: t(33))
        let got20 = release(&buffer, at: t(33))
        #expect(got20 == ["k3000"], "out at once, not after the hold")
        insert(keyframe(5, ts: 6000), into: &buffer, at: t(66))  // and back again, far behind
        let got21 = release(&buffer, at: t(66))
        #expect(got21 == ["k6000"])
        #expect(buffer.counters.restarts == 2 && buffer.counters.packetsGivenUp == 0)
    }

    @Test func duplicatesAndLatePacketsDecodeNothingTwice() {
        var buffer = VideoFrameBuffer(codec: .h264, holdMicros: Self.hold)
        let key = keyframe(10, ts: 0), p1 = pFrame(13, ts: 3000)
        insert(key + [p1[1], p1[1]], into: &buffer, at: t(0))  // 13 missing, 14 twice
        let got22 = release(&buffer, at: t(0))
        #expect(got22 == ["k0"])
        insert([p1[0], p1[0]], into: &buffer, at: t(30))  // the retransmission, twice
        let got23 = release(&buffer, at: t(30))
        #expect(got23 == ["3000"])
        insert(key + p1, into: &buffer, at: t(40))  // everything again, late
        let got24 = release(&buffer, at: t(40))
        #expect(got24.isEmpty)
        #expect(buffer.counters.framesAssembled == 2 && buffer.counters.framesGivenUp == 0)
    }
}
