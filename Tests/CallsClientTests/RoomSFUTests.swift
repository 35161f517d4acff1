@testable import Signalling
import Testing

/// Reading the room server's answer to "where does this room's media go" (`GET /sfu/ROOM`).
@Suite struct RoomSFUTests {
    let invite = "http://127.0.0.1:8080/r/alpha?t=TOKEN"

    func parse(_ text: String, invite: String? = nil) throws(RoomSFU.Failure) -> JanusTarget? {
        try RoomSFU.parse(Array(text.utf8), invite: invite ?? self.invite, display: "Ann")
    }

    @Test func aMeshRoomHasNoJanus() throws {
        #expect(try parse(#"{"sfu":"mesh"}"#) == nil)
    }

    @Test func aJanusRoomIsReachedThroughTheServerWithTheInvitesToken() throws {
        let target = try #require(try parse(#"{"sfu":"janus","janus":"/janus/alpha","room":812,"pin":"p1"}"#))
        #expect(target.url == "ws://127.0.0.1:8080/janus/alpha?t=TOKEN")
        #expect(target.room == .number(812) && target.pin == "p1" && target.display == "Ann")
        let secure = try #require(
            try parse(
                #"{"sfu":"janus","janus":"/janus/alpha","room":812}"#, invite: "https://example.org/r/alpha?t=T2"))
        #expect(secure.url == "wss://example.org/janus/alpha?t=T2" && secure.pin == nil)
    }

    @Test func aHostileAnswerIsRefusedWithAReason() {
        for text in [
            "", "[]", #"{"room":1}"#, #"{"sfu":7}"#, #"{"sfu":"livekit"}"#,
            // Janus elsewhere, or anything but the server's own door, is not followed.
            #"{"sfu":"janus","janus":"ws://evil.example/janus","room":1}"#,
            #"{"sfu":"janus","janus":"/janus/alpha?t=other","room":1}"#,
            #"{"sfu":"janus","janus":"/elsewhere","room":1}"#,
            #"{"sfu":"janus","janus":"/janus/alpha","room":0}"#,
            #"{"sfu":"janus","janus":"/janus/alpha","room":"1"}"#,
            #"{"sfu":"janus","janus":"/janus/alpha"}"#,
            #"{"sfu":"janus","janus":"/janus/alpha","room":1,"pin":"\#(String(repeating: "p", count: 200))"}"#
        ] {
            #expect(throws: RoomSFU.Failure.self, "\(text.prefix(60))") { try parse(text) }
        }
    }
}
