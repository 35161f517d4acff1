import RoomProtocol
@testable import Signalling
import Testing

@Suite struct JanusMessageTests {
    @Test func roomArgumentsAreNumbersOrStringIDs() {
        #expect(JanusRoom(argument: "1234") == .number(1234))
        #expect(JanusRoom(argument: "demo-room") == .name("demo-room"))
        // Leading zeros, signs and zero are not Janus's numbers: kept as the string given.
        #expect(JanusRoom(argument: "0042") == .name("0042"))
        #expect(JanusRoom(argument: "-5") == .name("-5"))
        #expect(JanusRoom(argument: "0") == .name("0"))
        #expect(JanusRoom(argument: "") == nil)
        #expect(JanusRoom(argument: "a\nb") == nil)
        #expect(JanusRoom(argument: String(repeating: "r", count: 129)) == nil)
    }

    @Test func requestsCarryTheirIdsAndNoOthers() throws {
        func object(_ request: JanusRequest) throws -> [String: JSONValue] {
            let text = request.text(transaction: "t1", session: 11, handle: 22)
            return try #require(JSONValue.parse(text)?.objectValue)
        }
        let create = try object(.create)
        #expect(create["janus"] == .string("create") && create["transaction"] == .string("t1"))
        #expect(create["session_id"] == nil && create["handle_id"] == nil)
        let attach = try object(.attach(plugin: "janus.plugin.videoroom"))
        #expect(attach["session_id"] == .int(11) && attach["handle_id"] == nil)
        #expect(attach["plugin"] == .string("janus.plugin.videoroom"))
        let join = try object(.join(room: .number(1234), pin: "p\"in", display: "Ann"))
        #expect(join["janus"] == .string("message") && join["handle_id"] == .int(22))
        #expect(
            join["body"]
                == .object([
                    "request": .string("join"), "ptype": .string("publisher"), "room": .int(1234),
                    "pin": .string("p\"in"), "display": .string("Ann")
                ]))
        let named = try object(.join(room: .name("r1"), pin: nil, display: nil))
        #expect(named["body"]?["room"] == .string("r1") && named["body"]?["pin"] == nil)
        let publish = try object(.publish(offer: "v=0\r\n"))
        #expect(publish["body"] == .object(["request": .string("publish")]))
        #expect(
            publish["jsep"] == .object(["type": .string("offer"), "sdp": .string("v=0\r\n"), "trickle": .bool(false)]))
        let keepalive = try object(.keepalive)
        #expect(keepalive["session_id"] == .int(11) && keepalive["handle_id"] == nil)
        #expect(try object(.leave)["handle_id"] == .int(22))
        let hangup = try object(.hangup)
        #expect(hangup["janus"] == .string("hangup") && hangup["handle_id"] == .int(22) && hangup["body"] == nil)
        #expect(try object(.destroy)["handle_id"] == nil)
    }

    @Test func repliesAreReadWithWhatEachKindCarries() throws {
        let success = try JanusReply.parse(#"{"janus":"success","transaction":"t","data":{"id":4851529837}}"#)
        #expect(success.kind == "success" && success.transaction == "t" && success.id == 4_851_529_837)
        let doubled = try JanusReply.parse(#"{"janus":"success","transaction":"t","data":{"id":12.0}}"#)
        #expect(doubled.id == 12)
        let fraction = try JanusReply.parse(#"{"janus":"success","data":{"id":1.5}}"#)
        #expect(fraction.id == nil)

        let answer = try JanusReply.parse(
            #"{"janus":"event","session_id":1,"transaction":"t","sender":2,"plugindata":{"plugin":"janus.plugin.videoroom","data":{"videoroom":"event","room":1234,"configured":"ok"}},"jsep":{"type":"answer","sdp":"v=0\r\n"}}"#
        )
        #expect(answer.sender == 2 && answer.pluginData?["configured"] == .string("ok"))
        #expect(answer.jsep == JanusReply.JSEP(type: "answer", sdp: "v=0\r\n") && answer.pluginError == nil)

        let refused = try JanusReply.parse(
            #"{"janus":"event","transaction":"t","plugindata":{"plugin":"janus.plugin.videoroom","data":{"videoroom":"event","error_code":433,"error":"Unauthorized (wrong pin)"}}}"#
        )
        #expect(refused.pluginError == JanusError(code: 433, reason: "Unauthorized (wrong pin)"))
        #expect("\(refused.pluginError!)" == "Unauthorized (wrong pin) (Janus error 433)")

        let core = try JanusReply.parse(
            #"{"janus":"error","transaction":"t","error":{"code":458,"reason":"No such session 9"}}"#)
        #expect(core.error == JanusError(code: 458, reason: "No such session 9"))

        let hangup = try JanusReply.parse(#"{"janus":"hangup","session_id":1,"sender":2,"reason":"ICE failed"}"#)
        #expect(hangup.kind == "hangup" && hangup.reason == "ICE failed" && hangup.transaction == nil)

        // Wrong types are left out, not trusted.
        let odd = try JanusReply.parse(#"{"janus":"event","transaction":7,"sender":"2","jsep":{"type":"answer"}}"#)
        #expect(odd.transaction == nil && odd.sender == nil && odd.jsep == nil)
    }

    @Test func subscriptionsAreTheirOwnRequests() throws {
        let subscribe = try #require(
            JSONValue.parse(
                JanusRequest.subscribe(room: .number(5), pin: "x", feeds: [77]).text(
                    transaction: "t", session: 1, handle: 2)))
        #expect(
            subscribe["body"]
                == .object([
                    "request": .string("join"), "ptype": .string("subscriber"), "room": .int(5), "pin": .string("x"),
                    "streams": .array([.object(["feed": .int(77)])])
                ]))
        // A simulcast publisher's smallest layer.
        let small = try #require(
            JSONValue.parse(
                JanusRequest.subscribe(room: .number(5), pin: nil, feeds: [77], substream: 0).text(
                    transaction: "t", session: 1, handle: 2)))
        #expect(small["body"]?["streams"] == .array([.object(["feed": .int(77), "substream": .int(0)])]))
        // Another layer of the subscribed video, later.
        let layer = try #require(
            JSONValue.parse(
                JanusRequest.configure(mid: "0", substream: 1).text(transaction: "t", session: 1, handle: 2)))
        #expect(
            layer["body"]
                == .object([
                    "request": .string("configure"),
                    "streams": .array([.object(["mid": .string("0"), "substream": .int(1)])])
                ]))
        #expect(layer["handle_id"] == .int(2) && layer["session_id"] == .int(1))
        let start = try #require(
            JSONValue.parse(JanusRequest.start(answer: "v=0").text(transaction: "t", session: 1, handle: 2)))
        #expect(start["jsep"]?["type"] == .string("answer") && start["body"]?["request"] == .string("start"))
    }

    @Test func publishersAreTheParticipantsThatPublish() throws {
        let listed = try JanusReply.parse(
            #"{"janus":"success","transaction":"t","plugindata":{"plugin":"janus.plugin.videoroom","data":{"videoroom":"participants","room":5,"participants":[{"id":1,"display":"Ann","publisher":true},{"id":2,"publisher":false},{"id":3,"publisher":true},{"display":"no id","publisher":true},"odd"]}}}"#
        )
        #expect(
            JanusSubscriber.publishers(in: listed)
                == [.init(id: 1, display: "Ann"), .init(id: 3, display: nil)])
        #expect(JanusSubscriber.publishers(in: JanusReply(kind: "success")).isEmpty)
    }

    @Test func malformedMessagesAreRefusedSayingWhat() {
        for text in ["", "[1,2]", "not json", #"{"transaction":"t"}"#, #"{"janus":""}"#, #"{"janus":5}"#] {
            #expect(throws: JanusProtocolError.self) { try JanusReply.parse(text) }
        }
        do {
            _ = try JanusReply.parse("{\"x\":\n1}")
            Issue.record("a message without a kind was read")
        } catch {
            #expect("\(error)" == "Janus sent a malformed message: no \"janus\" kind: '{\"x\": 1}'")
        }
        // What Janus says reaches a terminal: its reasons come escaped, as every network string does.
        let hostile = try? JanusReply.parse(#"{"janus":"error","error":{"code":1,"reason":"a\u202Eb\u001B[2J"}}"#)
        #expect(hostile?.error?.reason == "a\\u{202E}b\\u{1B}[2J")
        let huge = "{\"janus\":\"event\",\"x\":\"" + String(repeating: "a", count: 300_000) + "\"}"
        #expect(throws: JanusProtocolError.self) { try JanusReply.parse(huge) }
    }
}
