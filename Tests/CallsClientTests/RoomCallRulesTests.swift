@testable import CallsClient
import SDPWire
import Testing

@Suite struct RoomCallRulesTests {
    @Test(arguments: [("p1", 1), ("p12", 12), ("x", 0), ("", 0), ("p", 0)])
    func aRoomIDsNumber(id: String, number: Int) {
        #expect(RoomCallRules.number(id) == number)
    }

    @Test func theLargerNumberRollsBackInGlareAndTheSmallerKeepsItsOffer() {
        #expect(RoomCallRules(myID: "p2").glare(with: "p10") == .keepOurOffer)
        #expect(RoomCallRules(myID: "p10").glare(with: "p2") == .rollBackAndAnswer)
        // Before the welcome we count as 0: ours stands.
        #expect(RoomCallRules(myID: nil).glare(with: "p1") == .keepOurOffer)
    }

    /// Renewal timelines, one character a second from the failure: `-` waits, `r` renews.
    /// The smaller id renews after 2 s, the larger after 15 s; each renewal since the last
    /// connection waits twice as long, never past a minute.
    @Test(arguments: [
        ("p1", "p2", 0, "--r"),
        ("p2", "p1", 0, "---------------r"),
        ("p1", "p2", 1, "----r"),
        ("p1", "p2", 3, "----------------r"),
        ("p2", "p1", 1, "------------------------------r"),
        ("p1", "p2", 9, String(repeating: "-", count: 60) + "r")
    ])
    func renewalTimeline(me: String, them: String, renewals: Int, timeline: String) {
        let rules = RoomCallRules(myID: me)
        let failed = ContinuousClock.now
        let seen = (0..<timeline.count).map { second in
            rules.renewalDue(
                with: them, failedSince: failed, renewals: renewals, signallingUp: true,
                now: failed + .seconds(second)) ? "r" : "-"
        }.joined()
        #expect(seen == timeline)
    }

    @Test func nothingIsRenewedWhileTheSignallingIsDownOrBeforeTheWelcome() {
        let failed = ContinuousClock.now, late = failed + .seconds(600)
        #expect(
            !RoomCallRules(myID: "p1").renewalDue(
                with: "p2", failedSince: failed, renewals: 0,
                signallingUp: false, now: late))
        #expect(
            !RoomCallRules(myID: nil).renewalDue(
                with: "p2", failedSince: failed, renewals: 0,
                signallingUp: true, now: late))
    }

    @Test(arguments: [
        (["sha-256 AA"], ["sha-256 BB"], true),
        (["sha-256 AA", "sha-1 CC"], ["sha-256 AA"], false),
        ([], ["sha-256 BB"], false),
        (["sha-256 AA"], [], false)
    ])
    func anOfferFromANewConnection(offered: [String], known: [String], new: Bool) {
        #expect(RoomCallRules.comesFromNewConnection(offered: Set(offered), known: Set(known)) == new)
    }

    @Test(arguments: [
        (MediaDirection.sendonly, MediaDirection?.none, true),
        (.sendonly, .sendonly, false),
        (.sendonly, .inactive, true),
        (.inactive, .sendonly, true),
        (.inactive, .inactive, false),
        (.sendrecv, .sendonly, false)
    ])
    func ourScreenNeedsAnOffer(wanted: MediaDirection, negotiated: MediaDirection?, needs: Bool) {
        #expect(RoomCallRules.screenNeedsOffer(wanted: wanted, negotiated: negotiated) == needs)
    }

    /// A decoder wedge through a screen's life: it waits for a screen, wedges it, stays while the
    /// decoder stays wedged, wedges it again if it came back, and on a rebuild (another mid) a
    /// plain wedge ends while a sticky one follows.
    @Test func aWedgeFollowsTheScreenItIsAbout() {
        typealias Wedge = RoomCallRules.Wedge
        let waiting = Wedge(sticky: false, mid: nil)
        #expect(waiting.step(screenMid: "2", decoderWedged: false) == .wedge(mid: "2", followsRebuild: false))
        let plain = Wedge(sticky: false, mid: "2")
        #expect(plain.step(screenMid: "2", decoderWedged: true) == .keep)
        #expect(plain.step(screenMid: "2", decoderWedged: false) == .wedge(mid: "2", followsRebuild: false))
        #expect(plain.step(screenMid: "3", decoderWedged: false) == .endedByRebuild)
        let sticky = Wedge(sticky: true, mid: "2")
        #expect(sticky.step(screenMid: "2", decoderWedged: true) == .keep)
        #expect(sticky.step(screenMid: "3", decoderWedged: false) == .wedge(mid: "3", followsRebuild: true))
        #expect(
            Wedge(sticky: true, mid: nil).step(screenMid: "4", decoderWedged: false)
                == .wedge(mid: "4", followsRebuild: false))
    }
}

/// Signalling tried again every half second while the server would keep our place, then 2 s
/// doubling to a minute; back to quick once it is up again.
@Suite struct SignallingRetryTests {
    @Test func quickWithinTheGraceThenBackingOffToAMinute() {
        var retry = SignallingRetry()
        #expect(retry.failed(downFor: .seconds(1)) == .milliseconds(500))
        #expect(retry.failed(downFor: .seconds(14)) == .milliseconds(500))
        let later = [15, 17, 21, 29, 45, 77, 137, 197, 257].map { retry.failed(downFor: .seconds($0)) }
        #expect(later == [2, 4, 8, 16, 32, 60, 60, 60, 60].map { Duration.seconds($0) })
        retry.succeeded()
        #expect(retry.failed(downFor: .seconds(1)) == .milliseconds(500))
        #expect(retry.failed(downFor: .seconds(20)) == .seconds(2), "a new outage starts its backoff from 2 s")
    }
}

/// A room share without its server: ended after 30 s without --reconnect, kept with it.
@Suite struct RoomOutageTests {
    @Test func aShareWithoutReconnectEndsAfterThirtySecondsDown() {
        let start = ContinuousClock.now
        var outage = RoomOutage()
        #expect(outage.observe(signallingUp: true, now: start) == nil)
        var down: Duration?
        for second in 1...29 { down = outage.observe(signallingUp: false, now: start + .seconds(second)) }
        #expect(down == .seconds(28))
        #expect(RoomOutage.ending(downFor: down, reconnect: false) == nil)
        down = outage.observe(signallingUp: false, now: start + .seconds(31))
        #expect(
            RoomOutage.ending(downFor: down, reconnect: false)?.hasPrefix("the room server has not answered for 30 s")
                == true)
        #expect(RoomOutage.ending(downFor: down, reconnect: true) == nil, "--reconnect keeps trying")
        // Up again: the count starts over.
        #expect(outage.observe(signallingUp: true, now: start + .seconds(32)) == nil)
        #expect(outage.observe(signallingUp: false, now: start + .seconds(33)) == .zero)
    }
}
