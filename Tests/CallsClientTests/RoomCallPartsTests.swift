import CallsClient
import TestSupport
import Testing
@testable import CallMedia
@testable import RoomProtocol
@testable import ShareCore
@testable import Signalling

/// The pure parts of a room call: the protocol's messages, the invite link, the view tracker's
/// freeze and stall rules and the reconnect watch, on a manual clock.
@Suite struct RoomCallPartsTests {
    let t = Timeline(.seconds)

    @Test func welcomeAndSignalsAreRead() throws {
        let welcome = try RoomMessage.parse(
            #"{"type":"welcome","id":"p3","resume":"K","peers":[{"id":"p1","name":"Bo","sharing":true,"mid":"2"}],"extra":1}"#
        )
        #expect(
            welcome == .welcome(id: "p3", resume: "K", peers: [.init(id: "p1", name: "Bo", sharing: true, mid: "2")]))
        let offer = try RoomMessage.parse(#"{"type":"signal","from":"p1","kind":"offer","sdp":"v=0"}"#)
        #expect(offer == .signal(.init(peer: "p1", kind: .offer, sdp: "v=0")))
        let end = try RoomMessage.parse(#"{"type":"signal","from":"p1","kind":"candidate","candidate":"","mid":"0"}"#)
        #expect(end == .signal(.init(peer: "p1", kind: .candidate, candidate: "", mid: "0")))
        // A Janus room's sharer asks for a fresh subscription: no SDP, no candidate.
        let restart = try RoomMessage.parse(#"{"type":"signal","from":"p1","kind":"restart"}"#)
        #expect(restart == .signal(.init(peer: "p1", kind: .restart)))
        #expect(throws: RoomMessage.Failure.self) {
            try RoomMessage.parse(#"{"type":"signal","from":"p1","kind":"answer"}"#)
        }
        let share = try RoomMessage.parse(#"{"type":"share","from":"p1","on":false}"#)
        #expect(share == .share(from: "p1", on: false, mid: nil))
        let media = try RoomMessage.parse(
            #"{"type":"media","from":"p2","screens":[{"from":"p1","framesDecoded":812,"screenStalled":true}],"hearing":["p1"],"cameras":[{"from":"p1","framesDecoded":300}]}"#
        )
        #expect(
            media
                == .media(
                    .init(
                        from: "p2", screens: [.init(from: "p1", framesDecoded: 812, screenStalled: true)],
                        hearing: ["p1"], cameras: [.init(from: "p1", framesDecoded: 300)])))
    }

    /// A share in a room on Janus names its feed as the mid `janus:FEED`; other mids are no feed.
    @Test func aJanusFeedIsReadFromItsMidAndNothingElseIs() {
        #expect(JanusRoomPresence.mid(feed: 4_512_377_190) == "janus:4512377190")
        #expect(JanusRoomPresence.feed(mid: JanusRoomPresence.mid(feed: 77)) == 77)
        for mid in [nil, "2", "janus:", "janus:x1", "janus:-", "Janus:5", "janus: 5"] as [String?] {
            #expect(JanusRoomPresence.feed(mid: mid) == nil, "\(mid ?? "nil")")
        }
    }

    @Test(arguments: [
        ("not json", "not a JSON object"),
        (#"[1,2]"#, "not a JSON object"),
        (#"{"id":"p1"}"#, "without a type"),
        (#"{"type":"dance"}"#, "unknown message type 'dance'"),
        (#"{"type":"signal","from":"p1","kind":"offer"}"#, "without 'sdp'"),
        (#"{"type":"signal","kind":"answer","sdp":"v=0"}"#, "neither 'from' nor 'to'"),
        (#"{"type":"signal","from":"p1","kind":"shout","sdp":"v=0"}"#, "unknown kind"),
        (#"{"type":"welcome","id":"p1","resume":"k"}"#, "without 'peers'"),
        (#"{"type":"share","from":"p1"}"#, "without 'on'")
    ])
    func badMessagesAreRefusedWithAReason(text: String, reason: String) {
        #expect {
            _ = try RoomMessage.parse(text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func outgoingMessagesRoundTrip() throws {
        let messages: [RoomMessage] = [
            .join(name: "Ana", resume: "KEY"), .join(name: "Ana", resume: nil), .leave,
            .signal(.init(peer: "p1", kind: .answer, sdp: "v=0\r\n")),
            .signal(
                .init(peer: "p1", kind: .candidate, candidate: "candidate:1 1 udp 1 127.0.0.1 5000 typ host", mid: "0")),
            .share(from: nil, on: true, mid: "2"),
            .media(
                .init(
                    screens: [.init(from: "p1", framesDecoded: 5, screenStalled: false)], hearing: ["p1"],
                    cameras: [.init(from: "p1", framesDecoded: 9)])),
            .media(.init(hearing: ["p1", "p3"], muted: true, noSoundFrom: ["p3"]))
        ]
        for message in messages {
            #expect(try RoomMessage.parse(message.text) == message, "\(message.text)")
        }
        #expect(RoomMessage.signal(.init(peer: "p1", kind: .offer, sdp: "x")).text.contains(#""to":"p1""#))
    }

    @Test func inviteLinkBecomesTheWebSocketAddress() throws {
        #expect(
            try CallSession.socketURL(invite: "http://127.0.0.1:8080/r/demo?t=abc")
                == "ws://127.0.0.1:8080/ws/demo?t=abc")
        #expect(
            try CallSession.socketURL(invite: "https://rooms.example/r/team?t=x-y_z")
                == "wss://rooms.example/ws/team?t=x-y_z")
        for bad in ["", "demo", "ftp://h/r/demo?t=a", "http://h/x/demo?t=a", "http://h/r/demo", "http://h/r/demo?t="] {
            #expect(throws: CallSession.Failure.self) { try CallSession.socketURL(invite: bad) }
        }
    }

    @Test func viewTrackerCountsFreezesAndReportsStallsForThreeMinutes() {
        var view = ViewTracker()
        view.update(frames: 0, now: t(0), elapsed: 1)
        view.update(frames: 30, now: t(1), elapsed: 1)
        #expect(view.fps == 30 && view.freezes == 0)
        view.update(frames: 30, now: t(2), elapsed: 1)
        view.update(frames: 30, now: t(3), elapsed: 1)
        #expect(view.freezes == 1, "one freeze however long it lasts")
        var stalled = view.stalled(now: t(4.5))
        #expect(!stalled, "3.5 s without a frame is not yet a stall")
        stalled = view.stalled(now: t(5))
        #expect(stalled, "4 s without a frame")
        stalled = view.stalled(now: t(5 + 180))
        #expect(stalled)
        stalled = view.stalled(now: t(5 + 181))
        #expect(!stalled, "held at most 3 minutes")
        view.update(frames: 0, now: t(200), elapsed: 1)  // a rebuilt screen starts again at 0: movement
        stalled = view.stalled(now: t(201))
        #expect(!stalled)
        view.update(frames: 10, now: t(201), elapsed: 1)
        #expect(view.freezes == 1 && view.fps == 10)
    }

    @Test func reconnectWatchSaysItOnlyForALastingProblem() async {
        let watch = ReconnectWatch()
        await watch.signalling(up: false, now: t(0))
        await watch.tick(now: t(2))
        await watch.signalling(up: true, now: t(2.5))  // a 2.5 s cut
        await watch.tick(now: t(5))
        #expect(await watch.timesShown == 0)
        await watch.connections(healthy: false, now: t(10))
        #expect(await watch.tick(now: t(13)) == .reconnecting)
        await watch.connections(healthy: true, now: t(14))
        #expect(await watch.tick(now: t(14.5)) == .reconnecting, "stays a second past recovery")
        #expect(await watch.tick(now: t(15)) == .hidden)
        #expect(await watch.timesShown == 1)
    }
}
