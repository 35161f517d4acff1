@testable import CallsServer
import Testing
@testable import RoomProtocol

@Suite struct ClientMessageTests {
    @Test func wellFormedMessagesParse() throws {
        #expect(try ClientMessage.parse(#"{"type":"join","name":"  Ana  "}"#).get() == .join(name: "Ana", resume: nil))
        #expect(
            try ClientMessage.parse(#"{"type":"join","name":"Ana","resume":"k"}"#).get()
                == .join(name: "Ana", resume: "k"))
        #expect(try ClientMessage.parse(#"{"type":"leave"}"#).get() == .leave)
        guard
            case .signal(let to, let kind, _) = try ClientMessage.parse(
                #"{"type":"signal","to":"p1","kind":"candidate","candidate":""}"#
            ).get()
        else {
            Issue.record("not a signal")
            return
        }
        #expect(to == "p1" && kind == .candidate)
        // A Janus room's sharer asks a viewer to subscribe afresh: a signal with nothing else in it.
        guard
            case .signal("p2", .restart, _) = try ClientMessage.parse(#"{"type":"signal","to":"p2","kind":"restart"}"#)
                .get()
        else {
            Issue.record("not a restart signal")
            return
        }
        guard case .share(let on, let mid, _) = try ClientMessage.parse(#"{"type":"share","on":true,"mid":"2"}"#).get()
        else {
            Issue.record("not a share")
            return
        }
        #expect(on && mid == "2")
    }

    @Test(arguments: [
        ("", "the message is not JSON"),
        ("[]", "the message is not a JSON object"),
        (#"{"name":"x"}"#, #"the field "type" is missing"#),
        (#"{"type":"fly"}"#, #"unknown message type "fly""#),
        (#"{"type":"join"}"#, #"the field "name" of join is missing"#),
        (#"{"type":"join","name":"\u0007"}"#, #"the field "name" of join is refused: it holds control characters"#),
        (#"{"type":"signal","to":"p1","kind":"offer"}"#, #"the field "sdp" of signal offer is missing"#),
        (
            #"{"type":"signal","to":"p1","kind":"hello","sdp":"v=0"}"#,
            #"the field "kind" of signal must be "offer", "answer", "candidate" or "restart""#
        ),
        (#"{"type":"share","on":1}"#, #"the field "on" of share must be true or false"#),
        (#"{"type":"media","hearing":[1]}"#, #"the field "hearing" of media must be an array of participant ids"#),
        (
            #"{"type":"media","noSoundFrom":"p1"}"#,
            #"the field "noSoundFrom" of media must be an array of participant ids"#
        ),
        (#"{"type":"media","muted":"yes"}"#, #"the field "muted" of media must be true or false"#),
        (
            #"{"type":"media","screens":[{"from":"p1","framesDecoded":"many"}]}"#,
            #"the field "screens[].framesDecoded" of media must be a number"#
        )
    ])
    func badMessagesSayWhatIsWrong(text: String, said: String) {
        guard case .failure(let error) = ClientMessage.parse(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        #expect(error.description == said)
    }

    /// FuzzRoom found this (Fuzz/Regressions/FuzzRoom/name-of-64-long-characters.txt): a name of
    /// 64 characters, each a letter with many accents, was 2022 bytes, and the welcome carrying it
    /// was larger than the frame the join came in. Names are now bounded in bytes as well, tokens
    /// in bytes rather than characters, and an unknown type is quoted by scalars.
    @Test func fieldsAreBoundedInBytesNotOnlyCharacters() {
        let accented = String(repeating: "a" + String(repeating: "\u{301}", count: 15), count: 64)
        let join = #"{"type":"join","name":""# + accented + #""}"#
        guard case .failure(let error) = ClientMessage.parse(join) else {
            Issue.record("a 64-character name of \(accented.utf8.count) bytes was accepted")
            return
        }
        #expect(error.description == #"the field "name" of join is refused: it is longer than 64 bytes in UTF-8"#)
        let longMid = #"{"type":"share","on":true,"mid":"2"# + String(repeating: "\u{301}", count: 40) + #""}"#
        if case .success = ClientMessage.parse(longMid) {
            Issue.record("a mid of one character and 81 bytes was accepted")
        }
        let type = String(repeating: "x" + String(repeating: "\u{301}", count: 30), count: 40)
        guard case .failure(.unknownType(let quoted)) = ClientMessage.parse(#"{"type":""# + type + #""}"#) else {
            Issue.record("an unknown type was not refused as one")
            return
        }
        #expect(quoted.unicodeScalars.count == 40)
    }

    @Test func integersStayIntegersThroughTheRelay() {
        let value = JSONValue.parse(#"{"a":812,"b":0.5,"c":[true,null,"x"],"d":{"e":-3}}"#)
        #expect(value?.text == #"{"a":812,"b":0.5,"c":[true,null,"x"],"d":{"e":-3}}"#)
    }

    /// Seeded mutations of valid messages (flipped, cut, repeated and inserted bytes): every one is
    /// either a message or a readable error, and a room fed them as a joined participant sends
    /// nothing to anyone else except for messages that parsed.
    @Test func mutatedMessagesNeverCrashOrLeak() {
        let valid = [
            #"{"type":"join","name":"Ana"}"#,
            #"{"type":"signal","to":"p1","kind":"offer","sdp":"v=0\r\no=- 1 2 IN IP4 127.0.0.1"}"#,
            #"{"type":"signal","to":"p1","kind":"candidate","candidate":"candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host","mid":"0"}"#,
            #"{"type":"share","on":true,"mid":"2"}"#,
            #"{"type":"media","screens":[{"from":"p1","framesDecoded":812,"screenStalled":false}],"hearing":["p1"],"cameras":[{"from":"p1","framesDecoded":3}]}"#
        ]
        var seed: UInt64 = 0x5EED
        func next() -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        let t0 = ContinuousClock.now
        var room = Room(name: "fuzz", secrets: .seeded(1))
        room.connected(1, now: t0)
        room.connected(2, now: t0)
        _ = room.received(#"{"type":"join","name":"Ana"}"#, from: 1, now: t0)
        _ = room.received(#"{"type":"join","name":"Bo"}"#, from: 2, now: t0)
        var parsed = 0, refused = 0
        for i in 0..<4000 {
            var bytes = Array(valid[next() % valid.count].utf8)
            for _ in 0..<(1 + next() % 4) {
                guard !bytes.isEmpty else { break }
                let at = next() % bytes.count
                switch next() % 4 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: next())
                case 1: bytes.removeSubrange(at...)
                case 2: bytes.insert(contentsOf: bytes[at...].prefix(8), at: at)
                default: bytes.insert(UInt8(truncatingIfNeeded: next()), at: at)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let result = ClientMessage.parse(text)
            // Spread over time so the rate limit stays out of it.
            let outputs = room.received(text, from: 2, now: t0 + .milliseconds(i * 10))
            switch result {
            case .success:
                parsed += 1
            case .failure(let error):
                refused += 1
                #expect(!error.description.isEmpty)
                #expect(outputs.allSatisfy { if case .send(2, _) = $0 { true } else { false } }, "\(text)")
            }
        }
        #expect(parsed > 0 && refused > 0)
        #expect(room.participants.count >= 1)
    }

    @Test func namesAreCountedInBytesAndRefuseInvisibleCharacters() {
        func refused(_ name: String) -> Bool {
            if case .failure = ClientMessage.parse(
                JSONValue.object(["type": .string("join"), "name": .string(name)]).text)
            {
                return true
            }
            return false
        }
        #expect(refused("e" + String(repeating: "\u{301}", count: 50_000)))  // one character, 100,001 bytes
        #expect(refused(String(repeating: "画", count: 22)))  // 22 characters, 66 bytes
        #expect(!refused(String(repeating: "画", count: 21)))  // 63 bytes
        #expect(!refused(String(repeating: "a", count: 64)))
        #expect(refused(String(repeating: "a", count: 65)))
        for invisible in [
            "\u{202E}", "\u{200B}", "\u{200E}", "\u{200F}", "\u{2066}", "\u{2069}", "\u{FEFF}", "\u{85}", "\u{1B}"
        ] {
            #expect(refused("An\(invisible)a"), "U+\(String(invisible.unicodeScalars.first!.value, radix: 16))")
        }
        #expect(!refused("Zoë 🎉"))
    }
}
