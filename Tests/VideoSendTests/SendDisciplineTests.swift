import RTPWire
import ShareCore
import Testing
@testable import VideoSend

/// What keeps the send side inside its link when the receiver asks for more than it can carry:
/// the retransmission budget, a round trip between retransmissions of one packet, the frame
/// dropper, the keyframe clock, and a frame cost taken from what the encoder shows.
@Suite struct SendDisciplineTests {
    @Test func retransmissionsStayInsideAQuarterOfTheTarget() {
        // 1 Mbit/s: a quarter is 31,250 bytes a second, saved up for at most 250 ms (7,812 bytes).
        var pacer = Pacer<Int>(targetBitrate: 1_000_000)
        var accepted = 0
        for i in 0..<1000 {
            // A NACK storm: 1200-byte retransmissions every millisecond for a second.
            if pacer.enqueue(i, size: 1200, priority: .retransmission, nowMicros: Int64(i) * 1000) { accepted += 1 }
            _ = pacer.release(nowMicros: Int64(i) * 1000)
        }
        let bytes = accepted * 1200
        #expect(bytes <= 31_250 + 7_813 + 1200, "\(bytes) bytes of retransmissions in a second")
        #expect(bytes >= 31_250 - 1200, "the budget is used, not withheld: \(bytes)")
        #expect(pacer.counters.retransmissionsRefused == 1000 - accepted)
        // Video is not held to it.
        let videoTaken = pacer.enqueue(-1, size: 1200, priority: .video, nowMicros: 1_000_000)
        #expect(videoTaken)
    }

    @Test func aPacketIsNotResentWithinARoundTripOfItsLastRetransmission() {
        let history = RetransmissionHistory()
        history.store(
            RTPPacket(marker: false, payloadType: 96, sequenceNumber: 7, timestamp: 0, ssrc: 1, payload: [1]),
            sentMicros: 0)
        #expect(history.packetsToResend(for: [7], now: 10_000, rttMicros: 80_000).count == 1)
        #expect(history.packetsToResend(for: [7], now: 50_000, rttMicros: 80_000).isEmpty, "within the round trip")
        #expect(history.packetsToResend(for: [7], now: 95_000, rttMicros: 80_000).count == 1)
        #expect(history.counters.tooSoon == 1)
    }

    /// An encoder running at twice its target (libvpx at its coarsest on busy content): about
    /// half the frames are dropped and what leaves is the target.
    @Test func theFrameDropperHoldsAnOvershootingEncoderToItsTarget() {
        var guardian = OvershootGuard()
        let target = 300_000
        var encodedBits = 0
        var dropped = 0
        for frame in 0..<300 {  // 10 s at 30 fps, each frame 2 × its share
            let now = Int64(frame) * 33_333
            guard guardian.allows(target: target, now: now) else {
                dropped += 1
                continue
            }
            guardian.encoded(bytes: 2 * target / 30 / 8, target: target, now: now)
            encodedBits += 2 * target / 30
        }
        let rate = Double(encodedBits) / 10
        #expect(rate > 0.9 * Double(target) && rate < 1.15 * Double(target), "\(rate) bit/s")
        #expect(dropped > 120 && dropped < 180, "\(dropped) of 300 dropped")
        #expect(guardian.lastPercent < 20, "the last second measured at \(guardian.lastPercent) %")

        // An encoder under its target drops nothing.
        var under = OvershootGuard()
        var all = true
        for frame in 0..<90 {
            let now = Int64(frame) * 33_333
            all = all && under.allows(target: target, now: now)
            under.encoded(bytes: target / 60 / 8, target: target, now: now)
        }
        #expect(all)
        #expect(under.lastPercent < -40)
    }

    @Test func aSecondKeyframeFollowsTheFirstThenOneEveryInterval() {
        var clock = KeyframeClock(intervalMicros: 10_000_000)
        #expect(!clock.due(now: 0), "nothing to repeat before the first")
        clock.keyframe(at: 0)
        #expect(!clock.due(now: 999_999))
        #expect(clock.due(now: 1_000_000))
        clock.keyframe(at: 1_000_000)
        #expect(!clock.due(now: 10_999_999))
        #expect(clock.due(now: 11_000_000))
    }

    /// A still or nearly still screen costs a fraction of the policy's figure a frame: its full
    /// size is kept at a target that would otherwise have shrunk it.
    @Test func cheapContentKeepsItsSizeAtALowTarget() {
        let start = ContinuousClock.now
        var shaper = SendShaper(policy: .balanced)
        let before = shaper.update(now: start, sourceWidth: 1920, sourceHeight: 1080, targetBitrate: 500_000)
        #expect(before.shape.width < 1920, "at 0.06 bit a pixel 500 kbit/s carries 1080p at 4 fps")
        for _ in 0..<30 { shaper.encoded(bytes: 2_000, width: 1920, height: 1080, budgetBytes: 2_083) }
        var after = shaper.update(
            now: start + .seconds(1), sourceWidth: 1920, sourceHeight: 1080, targetBitrate: 500_000)
        after = shaper.update(now: start + .seconds(7), sourceWidth: 1920, sourceHeight: 1080, targetBitrate: 500_000)
        #expect(after.shape.width == 1920, "\(after.shape)")
        #expect(after.shape.frameRate >= 15, "\(after.shape)")
    }

    /// Detail keeps its full size and takes the frame rate from the measured cost with a tenth to
    /// spare, not the size's half: the encoder then spends most of its target, and the sender is
    /// not taken for application-limited (which would keep the estimate, and the frames, low).
    @Test func detailsFrameRateSpendsMostOfTheTarget() {
        let start = ContinuousClock.now
        var shaper = SendShaper(policy: .detail)
        // 1080p frames of 20 kB (0.08 bit a pixel) against 1.2 Mbit/s.
        for _ in 0..<30 { shaper.encoded(bytes: 20_000, width: 1920, height: 1080, budgetBytes: 20_000) }
        let d = shaper.update(now: start, sourceWidth: 1920, sourceHeight: 1080, targetBitrate: 1_200_000)
        #expect(d.shape.width == 1920)
        let spent = Double(d.shape.frameRate * 20_000 * 8) / 1_200_000
        #expect(spent >= 0.8 && spent <= 1.0, "\(d.shape.frameRate) fps spend \(spent) of the target")
    }

    /// Content dearer than the policy's figure (the encoder runs over each frame's share): the size
    /// comes down to what the target really carries.
    @Test func dearContentComesDownToWhatTheTargetCarries() {
        let start = ContinuousClock.now
        var shaper = SendShaper(policy: .balanced)
        let before = shaper.update(now: start, sourceWidth: 1280, sourceHeight: 720, targetBitrate: 900_000)
        for _ in 0..<30 {
            shaper.encoded(bytes: 7_500, width: before.shape.width, height: before.shape.height, budgetBytes: 3_750)
        }
        let after = shaper.update(
            now: start + .seconds(1), sourceWidth: 1280, sourceHeight: 720, targetBitrate: 900_000)
        #expect(after.shape.width < before.shape.width, "\(before.shape) then \(after.shape)")
    }
}
