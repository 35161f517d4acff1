import CallsClient
import Foundation
import Testing

/// Who hears whom, on a manual clock: one character a second (the call's tick).
///
/// Their audio to us: `t` connected and their tone decodes, `q` connected and what decodes is
/// digital silence, `m` the same while they say they are muted, `-` connected and nothing decodes,
/// `n` connected and they send no audio at all, `x` not connected. The verdict after each second:
/// `R` "Reconnecting to NAME…", `N` "No sound from NAME" (hearing), `H` hearing, `.` none.
///
/// Our audio to them, as their report says: `c` our connection is not up and their report does
/// not list us, `u` connected and not listed, `h` connected and listed in `hearing`, `s` listed in
/// `noSoundFrom` too. The verdict: `C` "NAME is connecting and can't hear you yet", `G` "NAME isn't
/// getting any sound from you", `.` none.
@Suite struct AudioPathRulesTests {
    let start = ContinuousClock.now

    func theirs(_ timeline: String) -> String {
        var rules = AudioPathRules()
        rules.joined("bo", now: start)
        var samples = 0
        var out = ""
        for (second, event) in timeline.enumerated() {
            var seen = AudioPathRules.Observation()
            seen.connected = event != "x"
            seen.theySendAudio = event != "n"
            if "tqm".contains(event) { samples += 48_000 }
            seen.samplesDecoded = samples
            seen.levelDbfs = event == "t" ? -20 : -120
            seen.theyAreMuted = event == "m"
            seen.theyHearUs = true
            seen.weSendAudio = true
            let verdict = rules.observe("bo", seen, now: start + .seconds(second))
            out.append(verdict.reconnecting ? "R" : verdict.noSound ? "N" : verdict.hearing ? "H" : ".")
        }
        return out
    }

    func ours(_ timeline: String, muted: Bool = false, sending: Bool = true) -> String {
        var rules = AudioPathRules()
        rules.joined("bo", now: start)
        var out = ""
        for (second, event) in timeline.enumerated() {
            var seen = AudioPathRules.Observation()
            seen.connected = event != "c"
            seen.theySendAudio = false
            seen.theyHearUs = event == "h" || event == "s"
            seen.theyHearNoSoundFromUs = event == "s"
            seen.weSendAudio = sending
            seen.weAreMuted = muted
            let verdict = rules.observe("bo", seen, now: start + .seconds(second))
            #expect(!(verdict.connecting && verdict.notGettingOurSound), "one notice about our sound at a time")
            out.append(verdict.connecting ? "C" : verdict.notGettingOurSound ? "G" : ".")
        }
        return out
    }

    /// The shared cases (Tests/Ladder/audio-path-cases.json), which the browser client's copy
    /// (audiopaths.js) is held to in Chromium by the client gate.
    struct Cases: Decodable {
        struct Marbles: Decodable, CustomTestStringConvertible, Sendable {
            var name: String
            var timeline: String
            var expect: String
            var muted: Bool?
            var sending: Bool?
            var testDescription: String { name }
        }
        struct Levels: Decodable, CustomTestStringConvertible, Sendable {
            var name: String
            var levels: [Double]
            var expect: String
            var testDescription: String { name }
        }
        var theirs: [Marbles]
        var ours: [Marbles]
        var speaking: [Levels]

        static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Ladder/audio-path-cases.json").path
        static let shared: Cases? = {
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return try? JSONDecoder().decode(Cases.self, from: data)
        }()
    }

    @Test func theSharedCasesAreThere() {
        #expect((Cases.shared?.theirs.count ?? 0) >= 10 && (Cases.shared?.ours.count ?? 0) >= 8)
        #expect((Cases.shared?.speaking.count ?? 0) >= 5)
    }

    @Test(arguments: Cases.shared?.theirs ?? [])
    func theirAudioToUs(_ c: Cases.Marbles) {
        #expect(theirs(c.timeline) == c.expect)
    }

    @Test(arguments: Cases.shared?.ours ?? [])
    func ourAudioToThem(_ c: Cases.Marbles) {
        #expect(ours(c.timeline, muted: c.muted ?? false, sending: c.sending ?? true) == c.expect)
    }

    // MARK: Words

    @Test func theNoticesSayWhoInPlainWords() {
        var verdict = AudioPathRules.Verdict()
        verdict.noSound = true
        verdict.connecting = true
        #expect(verdict.notices(name: "Bea") == ["No sound from Bea", "Bea is connecting and can't hear you yet"])
        verdict = AudioPathRules.Verdict()
        verdict.reconnecting = true
        verdict.notGettingOurSound = true
        #expect(verdict.notices(name: "Bea") == ["Reconnecting to Bea…", "Bea isn't getting any sound from you"])
    }

    @Test func aRenewedConnectionCountsItsSamplesAfresh() {
        var rules = AudioPathRules()
        rules.joined("bo", now: start)
        var seen = AudioPathRules.Observation()
        seen.connected = true
        seen.samplesDecoded = 480_000
        seen.levelDbfs = -20
        #expect(rules.observe("bo", seen, now: start).hearing)
        seen.samplesDecoded = 0  // a new connection's receiver
        #expect(!rules.observe("bo", seen, now: start + .seconds(1)).hearing)
        seen.samplesDecoded = 48_000
        #expect(rules.observe("bo", seen, now: start + .seconds(2)).hearing)
    }
}
