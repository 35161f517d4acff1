import CallsClient
import Testing
@testable import WebRTCTransport

/// Timelines for `ConsentTimer`, one look a second after the connection came up at 0 s; each
/// character says what the transport counted since the look before:
///   `s` we sent, nothing authenticated came in    `h` an authenticated packet came in, we sent nothing
///   `b` both                                      `-` neither
/// The expected line has a character a look: `.` consent holds, `x` expired (sending stops).
@Suite struct ConsentTimerTests {
    struct Run {
        var marbles = ""
        var verdicts: [ConsentTimer.Verdict] = []
    }

    func run(_ timeline: String, lookEvery: Duration = .seconds(1)) -> Run {
        let start = ContinuousClock.now
        var timer = ConsentTimer(connectedAt: start, heard: 40, sent: 300, lookEvery: lookEvery)
        var heard = 40, sent = 300
        var result = Run()
        for (index, event) in timeline.enumerated() {
            if event == "h" || event == "b" { heard += 3 }
            if event == "s" || event == "b" { sent += 50 }
            let verdict = timer.look(now: start + lookEvery * (index + 1), heard: heard, sent: sent)
            result.verdicts.append(verdict)
            result.marbles += verdict == .fresh ? "." : "x"
        }
        return result
    }

    func repeated(_ text: String, _ count: Int) -> String { String(repeating: text, count: count) }

    @Test func sendingIntoSilenceStopsAtTheLastLookBeforeThirtySeconds() {
        let run = run(repeated("s", 32))
        #expect(
            run.marbles == repeated(".", 28) + "xxxx",
            "heard last at the handshake (0 s): the look at 29 s is the last before 30 s")
        #expect(run.verdicts[28] == .expired(silentFor: .seconds(29)))
        #expect(ConsentTimer.expiredReason == "consent expired: nothing heard from the peer for 30 s")
    }

    @Test func aPeerThatKeepsTalkingKeepsConsent() {
        #expect(run(repeated("b", 90)).marbles == repeated(".", 90))
        #expect(run(repeated("ssssb", 18)).marbles == repeated(".", 90), "receiver reports every 5 s are enough")
        #expect(
            run(repeated("s", 28) + "b" + repeated("s", 28)).marbles == repeated(".", 56) + "x",
            "heard just in time (between 28 and 29 s): 30 s more from 28 s")
    }

    @Test func thirtySecondsCountFromTheLastAuthenticatedPacket() {
        // Heard last in the look at 10 s, so no earlier than 9 s: the last look before 39 s is at 38 s.
        #expect(run(repeated("b", 10) + repeated("s", 40)).marbles == repeated(".", 37) + repeated("x", 13))
        // Reports every 5 s, then none: the last came between 24 and 25 s.
        #expect(run(repeated("ssssb", 5) + repeated("s", 40)).marbles == repeated(".", 52) + repeated("x", 13))
    }

    @Test func whileWeSendNothingASilentPeerCostsNothing() {
        #expect(run(repeated("-", 120)).marbles == repeated(".", 120), "an idle connection is left to libnice's checks")
        #expect(run(repeated("h", 60)).marbles == repeated(".", 60))
        // Idle for a minute, then sending: 30 s from the first packet out (no earlier than 60 s).
        let idleThenSending = run(repeated("-", 60) + repeated("s", 35))
        #expect(idleThenSending.marbles == repeated(".", 88) + repeated("x", 7))
        #expect(idleThenSending.verdicts[88] == .expired(silentFor: .seconds(89)), "silence counted from the handshake")
        // Heard, then silent while we sent nothing, then sending: 30 s from the first packet out.
        #expect(
            run(repeated("h", 5) + repeated("-", 20) + repeated("s", 40)).marbles == repeated(".", 53)
                + repeated("x", 12))
    }

    @Test func onceExpiredConsentDoesNotComeBack() {
        let run = run(repeated("s", 30) + repeated("b", 5))
        #expect(
            run.marbles == repeated(".", 28) + repeated("x", 7),
            "a packet after expiry changes nothing: a new connection is needed")
        #expect(run.verdicts.last == .expired(silentFor: .seconds(35)))
    }

    @Test func atTheTransportsTenLooksASecondSendingStopsAtTwentyNineNineSeconds() throws {
        let run = run(repeated("s", 305), lookEvery: .milliseconds(100))
        let first = try #require(run.verdicts.firstIndex { $0 != .fresh })
        #expect(first == 298, "the look at 29.9 s")
        #expect(run.verdicts[first] == .expired(silentFor: .milliseconds(29_900)))
    }

    @Test func aLookThatComesLateExpiresAtOnce() {
        let start = ContinuousClock.now
        var timer = ConsentTimer(connectedAt: start, heard: 0, sent: 0, lookEvery: .milliseconds(100))
        #expect(timer.look(now: start + .seconds(1), heard: 0, sent: 10) == .fresh)
        // The loop was held up for 44 s: the next look is past the deadline.
        #expect(timer.look(now: start + .seconds(45), heard: 0, sent: 20) == .expired(silentFor: .seconds(45)))
        #expect(timer.hasExpired)
    }
}
