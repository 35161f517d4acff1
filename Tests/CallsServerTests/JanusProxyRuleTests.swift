import RoomProtocol
import Testing

/// What the room server's door to Janus lets through: a VideoRoom publisher's and subscriber's
/// messages in the participant's own room, nothing else, each refusal a Janus-shaped error.
@Suite struct JanusProxyRuleTests {
    let rule = JanusProxyRule(room: 4242, maxBytes: 4096)

    func refusal(_ text: String) -> (reason: String, answer: [String: JSONValue])? {
        guard case .refuse(let reason, let answer) = rule.judge(text), let object = JSONValue.parse(answer)?.objectValue
        else { return nil }
        return (reason, object)
    }

    @Test func aParticipantsMessagesGoThrough() {
        for text in [
            #"{"janus":"create","transaction":"a"}"#,
            #"{"janus":"attach","plugin":"janus.plugin.videoroom","transaction":"b","session_id":1}"#,
            #"{"janus":"message","body":{"request":"join","ptype":"publisher","room":4242,"pin":"x","display":"Ann"},"transaction":"c"}"#,
            #"{"janus":"message","body":{"request":"join","ptype":"subscriber","room":4242.0,"streams":[{"feed":7}]},"transaction":"d"}"#,
            #"{"janus":"message","body":{"request":"configure","streams":[{"mid":"0","substream":0}]},"transaction":"e"}"#,
            #"{"janus":"message","body":{"request":"publish"},"jsep":{"type":"offer","sdp":"v=0"},"transaction":"f"}"#,
            #"{"janus":"message","body":{"request":"listparticipants","room":4242},"transaction":"g"}"#,
            #"{"janus":"trickle","candidate":{"completed":true},"transaction":"h"}"#,
            #"{"janus":"keepalive","transaction":"i"}"#, #"{"janus":"detach","transaction":"j"}"#,
            #"{"janus":"hangup","transaction":"k"}"#, #"{"janus":"destroy","transaction":"l"}"#,
            #"{"janus":"message","body":{"request":"leave"},"transaction":"m"}"#
        ] {
            #expect(rule.judge(text) == .forward, "\(text)")
        }
    }

    @Test func roomsAreNeitherMadeNorEndedNorReachedElsewhere() throws {
        let cases: [(String, String)] = [
            (#"{"janus":"message","body":{"request":"create","room":4242},"transaction":"t1"}"#, "'create'"),
            (
                #"{"janus":"message","body":{"request":"destroy","room":4242,"secret":"s"},"transaction":"t2"}"#,
                "'destroy'"
            ),
            (#"{"janus":"message","body":{"request":"list"},"transaction":"t3"}"#, "'list'"),
            (#"{"janus":"message","body":{"request":"rtp_forward","room":4242},"transaction":"t4"}"#, "'rtp_forward'"),
            (
                #"{"janus":"message","body":{"request":"join","ptype":"publisher","room":4243},"transaction":"t5"}"#,
                "another room"
            ),
            (
                #"{"janus":"message","body":{"request":"join","ptype":"publisher","room":"4242"},"transaction":"t6"}"#,
                "another room"
            ),
            (#"{"janus":"message","body":{"request":"listparticipants","room":1},"transaction":"t7"}"#, "another room"),
            (#"{"janus":"attach","plugin":"janus.plugin.streaming","transaction":"t8"}"#, "videoroom"),
            (#"{"janus":"message","transaction":"t9"}"#, "without a body"),
            (#"{"janus":"info","transaction":"t10"}"#, "'info'"),
            (#"{"janus":"message","body":{"request":"kick","room":4242,"id":1},"transaction":"t11"}"#, "'kick'")
        ]
        for (index, (text, words)) in cases.enumerated() {
            let refused = try #require(refusal(text), "\(text)")
            #expect(refused.reason.contains(words), "\(refused.reason)")
            #expect(refused.answer["janus"] == .string("error"))
            #expect(refused.answer["transaction"] == .string("t\(index + 1)"))
            #expect(refused.answer["error"]?["code"] == .int(403))
        }
    }

    @Test func whatIsNotAMessageIsRefusedWithoutATransaction() throws {
        for text in ["", "[]", "null", "{", #"{"transaction":"x"}"#, String(repeating: " ", count: 5000)] {
            let refused = try #require(refusal(text), "\(text.prefix(20))")
            #expect(refused.answer["janus"] == .string("error"))
            #expect(refused.answer["transaction"] == nil || text.contains("transaction"))
        }
        // A hostile kind is named, cut short and without control characters.
        let odd = try #require(
            refusal(
                #"{"janus":"\u0007\u001b[31mred"#.appending(String(repeating: "x", count: 100))
                    + #"","transaction":"q"}"#))
        #expect(odd.reason.count < 120 && !odd.reason.unicodeScalars.contains { $0.value < 0x20 })
    }
}
