@testable import CallsServer
import TestSupport
import Testing
@testable import RoomProtocol

/// The room's state machine on a manual clock: `at(seconds)` after a start, never a clock read.
@Suite struct RoomTests {
    let at = Timeline(.seconds)

    func makeRoom(grace: Double = 15) -> Room {
        Room(name: "demo", limits: RoomLimits(grace: .milliseconds(Int64(grace * 1000))), secrets: .seeded(7))
    }

    /// The texts sent to `connection`, parsed.
    func sent(_ outputs: [RoomOutput], to connection: ConnectionID) -> [JSONValue] {
        outputs.compactMap {
            if case .send(connection, let text) = $0 { return JSONValue.parse(text) }
            return nil
        }
    }

    func closes(_ outputs: [RoomOutput]) -> [(ConnectionID, UInt16)] {
        outputs.compactMap {
            if case .close(let connection, let code, _) = $0 { return (connection, code) }
            return nil
        }
    }

    /// Joins `name` on `connection`; returns its id and resume key.
    func join(
        _ room: inout Room, _ connection: ConnectionID, _ name: String, at time: Double = 0,
        resume: String? = nil
    ) -> (id: String, resume: String, outputs: [RoomOutput]) {
        room.connected(connection, now: at(time))
        var message: [String: JSONValue] = ["type": .string("join"), "name": .string(name)]
        if let resume { message["resume"] = .string(resume) }
        let outputs = room.received(JSONValue.object(message).text, from: connection, now: at(time))
        let welcome = sent(outputs, to: connection).first { $0["type"] == .string("welcome") }
        return (welcome?["id"]?.stringValue ?? "", welcome?["resume"]?.stringValue ?? "", outputs)
    }

    @Test func tokensAreLongAndURLSafe() {
        let room = Room(name: "demo")
        #expect(room.token.count == 22)  // 128 bits in base64 without padding
        #expect(room.token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(room.accepts(token: room.token))
        #expect(!room.accepts(token: String(room.token.dropLast()) + "x"))
        #expect(!room.accepts(token: ""))
        #expect(Room(name: "demo").token != room.token)
    }

    @Test func joinWelcomesAndTellsTheOthers() {
        var room = makeRoom()
        let ana = join(&room, 1, "Ana")
        #expect(ana.id == "p1")
        #expect(!ana.resume.isEmpty)
        let bo = join(&room, 2, "Bo", at: 1)
        #expect(bo.id == "p2")
        let welcome = sent(bo.outputs, to: 2).first!
        #expect(
            welcome["peers"]
                == .array([.object(["id": .string("p1"), "name": .string("Ana"), "sharing": .bool(false)])]))
        let toAna = sent(bo.outputs, to: 1)
        #expect(
            toAna == [
                .object([
                    "type": .string("joined"),
                    "peer": .object([
                        "id": .string("p2"), "name": .string("Bo"),
                        "sharing": .bool(false)
                    ])
                ])
            ])
    }

    @Test func idsAreNeverReused() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = room.received(#"{"type":"leave"}"#, from: 1, now: at(1))
        let bo = join(&room, 2, "Bo", at: 2)
        #expect(bo.id == "p2")
    }

    @Test func signalGoesOnlyToItsTargetInOrderWithFrom() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        _ = join(&room, 3, "Cy")
        var outputs: [RoomOutput] = []
        outputs += room.received(
            #"{"type":"signal","to":"p1","kind":"offer","sdp":"v=0 one","extra":5}"#, from: 3, now: at(1))
        outputs += room.received(
            #"{"type":"signal","to":"p1","kind":"candidate","candidate":"candidate:1 1 udp 1 127.0.0.1 5000 typ host","mid":"0"}"#,
            from: 3, now: at(1))
        outputs += room.received(#"{"type":"signal","to":"p1","kind":"candidate","candidate":""}"#, from: 3, now: at(1))
        let toAna = sent(outputs, to: 1)
        #expect(toAna.map { $0["kind"]?.stringValue } == ["offer", "candidate", "candidate"])
        #expect(toAna.allSatisfy { $0["from"] == .string("p3") && $0["to"] == nil })
        #expect(toAna[0]["extra"] == .int(5))  // unknown fields pass through
        #expect(toAna[1]["mid"] == .string("0"))
        #expect(sent(outputs, to: 2).isEmpty)
        #expect(sent(outputs, to: 3).isEmpty)
    }

    @Test func signalToNobodyOrSelfIsRefused() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        let unknown = room.received(#"{"type":"signal","to":"p9","kind":"answer","sdp":"v=0"}"#, from: 1, now: at(1))
        #expect(sent(unknown, to: 1).first?["code"] == .string("unknown-peer"))
        let toSelf = room.received(#"{"type":"signal","to":"p1","kind":"answer","sdp":"v=0"}"#, from: 1, now: at(1))
        #expect(sent(toSelf, to: 1).first?["code"] == .string("unknown-peer"))
    }

    @Test func messagesBeforeJoinAreRefused() {
        var room = makeRoom()
        room.connected(1, now: at(0))
        let outputs = room.received(#"{"type":"share","on":true,"mid":"2"}"#, from: 1, now: at(0))
        #expect(sent(outputs, to: 1).first?["code"] == .string("not-joined"))
        #expect(room.participants.isEmpty)
    }

    @Test func shareIsRelayedAndKeptForLaterWelcomes() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        let on = room.received(#"{"type":"share","on":true,"mid":"2"}"#, from: 1, now: at(1))
        #expect(
            sent(on, to: 2) == [
                .object(["type": .string("share"), "on": .bool(true), "mid": .string("2"), "from": .string("p1")])
            ])
        let cy = join(&room, 3, "Cy", at: 2)
        let ana = sent(cy.outputs, to: 3).first?["peers"]?.arrayValue?.first
        #expect(ana?["sharing"] == .bool(true))
        #expect(ana?["mid"] == .string("2"))
        let off = room.received(#"{"type":"share","on":false}"#, from: 1, now: at(3))
        #expect(sent(off, to: 3).first?["on"] == .bool(false))
        #expect(room.participants.first?.sharing == false)
    }

    @Test func mediaReportsGoToEveryoneElse() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        _ = join(&room, 3, "Cy")
        let report =
            #"{"type":"media","screens":[{"from":"p1","framesDecoded":812,"screenStalled":false}],"hearing":["p1"]}"#
        let outputs = room.received(report, from: 2, now: at(1))
        for connection in [1, 3] {
            let got = sent(outputs, to: connection)
            #expect(got.count == 1)
            #expect(got.first?["from"] == .string("p2"))
            #expect(got.first?["screens"]?.arrayValue?.first?["framesDecoded"] == .int(812))
        }
        #expect(sent(outputs, to: 2).isEmpty)
    }

    @Test func leaveTellsTheOthersAtOnce() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        let outputs = room.received(#"{"type":"leave"}"#, from: 2, now: at(1))
        #expect(sent(outputs, to: 1) == [.object(["type": .string("left"), "id": .string("p2")])])
        #expect(closes(outputs).map(\.0) == [2])
        #expect(room.participants.map(\.id) == ["p1"])
    }

    @Test func resumeWithinGraceKeepsThePlaceAndDeliversWhatWasSentMeanwhile() {
        var room = makeRoom(grace: 15)
        _ = join(&room, 1, "Ana")
        let bo = join(&room, 2, "Bo")
        _ = room.disconnected(2, now: at(10))
        // While Bo is away: an offer and a share for Bo are kept; a media report is not.
        var meanwhile = room.received(
            #"{"type":"signal","to":"p2","kind":"offer","sdp":"v=0 again"}"#, from: 1, now: at(11))
        meanwhile += room.received(#"{"type":"share","on":true,"mid":"2"}"#, from: 1, now: at(11))
        meanwhile += room.received(#"{"type":"media","hearing":[]}"#, from: 1, now: at(11))
        meanwhile += room.tick(now: at(24))
        #expect(meanwhile.allSatisfy { if case .send(let c, _) = $0 { c == 1 } else { false } })
        let back = join(&room, 3, "Bo", at: 24.5, resume: bo.resume)
        #expect(back.id == "p2")
        let toBo = sent(back.outputs, to: 3)
        #expect(toBo.map { $0["type"]?.stringValue } == ["welcome", "signal", "share"])
        #expect(toBo[1]["sdp"] == .string("v=0 again"))
        // Nobody heard left or joined.
        #expect(sent(back.outputs, to: 1).isEmpty)
        #expect(room.tick(now: at(60)).isEmpty)
        #expect(room.participants.map(\.id) == ["p1", "p2"])
    }

    @Test func afterGraceEveryoneHearsLeft() {
        var room = makeRoom(grace: 15)
        _ = join(&room, 1, "Ana")
        let bo = join(&room, 2, "Bo")
        _ = room.disconnected(2, now: at(10))
        #expect(room.tick(now: at(24.9)).isEmpty)
        let outputs = room.tick(now: at(25))
        #expect(sent(outputs, to: 1) == [.object(["type": .string("left"), "id": .string("p2")])])
        // The old key is worth nothing now: joining with it makes a new participant.
        let again = join(&room, 3, "Bo", at: 26, resume: bo.resume)
        #expect(again.id == "p3")
        #expect(sent(again.outputs, to: 1).first?["type"] == .string("joined"))
    }

    @Test func resumeOverALiveConnectionReplacesIt() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        let bo = join(&room, 2, "Bo")
        // The server has not yet noticed Bo's old connection is dead when Bo comes back.
        let back = join(&room, 3, "Bo", at: 2, resume: bo.resume)
        #expect(back.id == "p2")
        #expect(closes(back.outputs).map(\.0) == [2])
        #expect(sent(back.outputs, to: 1).isEmpty)
        // The old connection's late close changes nothing.
        _ = room.disconnected(2, now: at(3))
        #expect(room.presentIDs == ["p1", "p2"])
        let offer = room.received(#"{"type":"signal","to":"p2","kind":"offer","sdp":"v=0"}"#, from: 1, now: at(4))
        #expect(sent(offer, to: 3).count == 1)
    }

    @Test func badMessagesAreAnsweredAndChangeNothing() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        let before = room.snapshot
        for junk in [
            "", "{", "null", "[]", "42", #"{"type":7}"#, #"{"type":"dance"}"#, #"{"type":"signal","to":"p1"}"#,
            #"{"type":"signal","to":"p1","kind":"offer"}"#, #"{"type":"share","on":"yes"}"#,
            #"{"type":"media","screens":{}}"#, #"{"type":"join","name":""}"#
        ] {
            let outputs = room.received(junk, from: 2, now: at(1))
            #expect(sent(outputs, to: 2).first?["type"] == .string("error"), "\(junk)")
            #expect(sent(outputs, to: 1).isEmpty, "\(junk)")
            #expect(closes(outputs).isEmpty, "\(junk)")
        }
        #expect(room.snapshot == before)
        let binary = room.receivedBinary(byteCount: 10, from: 2, now: at(1))
        #expect(sent(binary, to: 2).first?["code"] == .string("bad-message"))
    }

    @Test func oversizedFrameClosesOnlyItsConnection() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        let big = #"{"type":"media","pad":""# + String(repeating: "x", count: 256 * 1024) + #""}"#
        let outputs = room.received(big, from: 2, now: at(1))
        #expect(closes(outputs).map(\.0) == [2])
        #expect(closes(outputs).map(\.1) == [1009])
        #expect(sent(outputs, to: 1).isEmpty)
        // Frames that arrive after the refusal are dropped.
        #expect(room.received(#"{"type":"media"}"#, from: 2, now: at(1)).isEmpty)
    }

    @Test func floodClosesTheFlooderAfterTheLimitAndTheWindowMoves() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana", at: 0)
        _ = join(&room, 2, "Bo", at: 0)
        // 199 more in the join's second pass; spread over two windows, 400 in all would be fine.
        for i in 0..<199 {
            #expect(closes(room.received(#"{"type":"media"}"#, from: 2, now: at(0.5 + Double(i) / 1000))).isEmpty)
        }
        for i in 0..<200 {
            #expect(closes(room.received(#"{"type":"media"}"#, from: 2, now: at(1.0 + Double(i) / 1000))).isEmpty)
        }
        let over = room.received(#"{"type":"media"}"#, from: 2, now: at(1.5))
        #expect(closes(over).map(\.0) == [2])
        #expect(closes(over).map(\.1) == [1008])
        #expect(sent(over, to: 2).first?["code"] == .string("rate"))
        #expect(sent(over, to: 1).isEmpty)
    }

    @Test func anAbsentParticipantTooFarBehindLosesItsPlace() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        _ = room.disconnected(2, now: at(1))
        var outputs: [RoomOutput] = []
        for i in 0...room.limits.maxQueued {
            outputs += room.received(
                #"{"type":"signal","to":"p2","kind":"candidate","candidate":""}"#, from: 1,
                now: at(2 + Double(i) / 100))
        }
        #expect(sent(outputs, to: 1).last == .object(["type": .string("left"), "id": .string("p2")]))
        #expect(room.participants.map(\.id) == ["p1"])
    }

    @Test func aRestoredRoomLetsEveryoneResumeWithinGrace() {
        var room = makeRoom(grace: 15)
        let ana = join(&room, 1, "Ana")
        let bo = join(&room, 2, "Bo")
        _ = room.received(#"{"type":"share","on":true,"mid":"2"}"#, from: 1, now: at(1))
        let snapshot = room.snapshot
        // A new server process: connections are new, the room comes from the snapshot.
        var restored = Room(restoring: snapshot, limits: room.limits, secrets: .seeded(9), now: at(100))
        #expect(restored.token == room.token)
        let anaBack = join(&restored, 11, "Ana", at: 101, resume: ana.resume)
        let boBack = join(&restored, 12, "Bo", at: 102, resume: bo.resume)
        #expect(anaBack.id == "p1")
        #expect(boBack.id == "p2")
        #expect(sent(boBack.outputs, to: 12).first?["peers"]?.arrayValue?.first?["sharing"] == .bool(true))
        #expect(sent(anaBack.outputs, to: 12).isEmpty && sent(boBack.outputs, to: 11).isEmpty)
        #expect(restored.tick(now: at(200)).isEmpty)
        let cy = join(&restored, 13, "Cy", at: 201)
        #expect(cy.id == "p3")
    }

    @Test func aRestoredParticipantThatNeverReturnsLeavesAfterGrace() {
        var room = makeRoom(grace: 15)
        let ana = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        var restored = Room(restoring: room.snapshot, limits: room.limits, now: at(100))
        _ = join(&restored, 11, "Ana", at: 101, resume: ana.resume)
        let outputs = restored.tick(now: at(115))
        #expect(sent(outputs, to: 11) == [.object(["type": .string("left"), "id": .string("p2")])])
    }

    @Test func revisionMovesWithMembershipAndSharingOnly() {
        var room = makeRoom()
        let start = room.revision
        _ = join(&room, 1, "Ana")
        #expect(room.revision == start + 1)
        _ = room.received(#"{"type":"media"}"#, from: 1, now: at(1))
        #expect(room.revision == start + 1)
        _ = room.received(#"{"type":"share","on":true,"mid":"2"}"#, from: 1, now: at(1))
        #expect(room.revision == start + 2)
    }

    @Test func aConnectionThatNeverJoinsIsClosed() {
        var room = makeRoom()
        _ = join(&room, 1, "Ana")
        room.connected(2, now: at(1))
        #expect(closes(room.tick(now: at(10.9))).isEmpty)
        let outputs = room.tick(now: at(11))
        #expect(closes(outputs).map(\.0) == [2])
        #expect(closes(outputs).map(\.1) == [1008])
        #expect(closes(room.tick(now: at(30))).isEmpty)  // once; Ana, joined, is never touched
    }

    /// A signal of exactly `bytes` bytes from `from` to `to`, its sdp padded to fit.
    func signal(to: String, bytes: Int) -> String {
        func text(_ sdp: String) -> String {
            JSONValue.object([
                "type": .string("signal"), "to": .string(to), "kind": .string("offer"), "sdp": .string(sdp)
            ]).text
        }
        return text(String(repeating: "v", count: bytes - text("").utf8.count))
    }

    @Test func aRelayNeverGoesOverTheFrameLimit() {
        var limits = RoomLimits()
        limits.maxFrameBytes = 1000
        var room = Room(name: "demo", limits: limits, secrets: .seeded(7))
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        let atTheLimit = signal(to: "p2", bytes: 1000)
        #expect(atTheLimit.utf8.count == 1000)
        let outputs = room.received(atTheLimit, from: 1, now: at(1))  // relayed with "from", it would be 1002
        #expect(sent(outputs, to: 2).isEmpty)
        #expect(sent(outputs, to: 1).first?["code"] == .string("too-large"))
        #expect(closes(outputs).isEmpty)
        let media = JSONValue.object(["type": .string("media"), "pad": .string(String(repeating: "m", count: 970))])
            .text
        #expect(sent(room.received(media, from: 1, now: at(1)), to: 2).isEmpty)
        let fits = signal(to: "p2", bytes: 990)
        for output in room.received(fits, from: 1, now: at(1)) {
            if case .send(let connection, let text) = output {
                #expect(connection == 2)
                #expect(text.utf8.count <= 1000)
            }
        }
    }

    @Test func anAbsentParticipantsQueueIsCappedInBytes() {
        var limits = RoomLimits()
        limits.maxQueuedBytes = 10_000
        var room = Room(name: "demo", limits: limits, secrets: .seeded(7))
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        _ = room.disconnected(2, now: at(1))
        #expect(sent(room.received(signal(to: "p2", bytes: 4000), from: 1, now: at(1)), to: 1).isEmpty)
        #expect(sent(room.received(signal(to: "p2", bytes: 4000), from: 1, now: at(1)), to: 1).isEmpty)
        let third = room.received(signal(to: "p2", bytes: 4000), from: 1, now: at(1))
        #expect(sent(third, to: 1) == [.object(["type": .string("left"), "id": .string("p2")])])
        #expect(room.participants.map(\.id) == ["p1"])
    }

    @Test func shareMessagesAreRateLimited() {
        var limits = RoomLimits()
        limits.maxShareMessagesPerSecond = 2
        var room = Room(name: "demo", limits: limits, secrets: .seeded(7))
        _ = join(&room, 1, "Ana")
        _ = join(&room, 2, "Bo")
        var relayed = 0, refused = 0
        for flip in 0..<10 {
            let outputs = room.received(
                #"{"type":"share","on":\#(flip % 2 == 0)}"#, from: 1, now: at(1 + Double(flip) * 0.01))
            relayed += sent(outputs, to: 2).count
            refused += sent(outputs, to: 1).filter { $0["code"] == .string("rate") }.count
        }
        #expect(relayed == 2)
        #expect(refused == 8)
        #expect(room.participants[0].sharing == false)  // on, off; the rest refused
        #expect(sent(room.received(#"{"type":"share","on":true}"#, from: 1, now: at(2.1)), to: 2).count == 1)
        // The window moved: a second message in it is still let through.
        #expect(sent(room.received(#"{"type":"share","on":true}"#, from: 1, now: at(2.1)), to: 1).isEmpty)
    }
}
