import CallsClient
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

    // MARK: Their audio to us

    @Test func audioThatDecodesIsHeardWhateverItsLevel() {
        #expect(theirs("tttttt") == "HHHHHH")
        #expect(theirs("tqqq") == "HHHH", "digital silence still comes through the path")
    }

    @Test func fiveSecondsOfSilenceFromSomeoneUnmutedIsNoSound() {
        #expect(theirs("tqqqqqqqt") == "HHHHHHNNH")
        #expect(theirs("qqqqqtqqqqqq") == "HHHHHHHHHHHN", "a second of sound starts the count again")
    }

    @Test func aMutedPersonIsNeverNoSound() {
        #expect(theirs("tmmmmmmmmm") == "HHHHHHHHHH")
        #expect(theirs("xxxmmm") == "...HHH", "connected and muted is hearing")
    }

    @Test func twoSecondsWithoutAudioOnAnUpConnectionIsReconnecting() {
        #expect(theirs("tt----tt") == "HHHRRRHH")
        #expect(theirs("--") == "..", "the first two seconds of a connection are its own")
        #expect(theirs("---") == "..R")
    }

    @Test func someoneWhoSendsNoAudioIsNeitherHeardNorReconnecting() {
        #expect(theirs("nnnnnn") == "......")
    }

    @Test func nothingIsSaidOfAConnectionThatIsNotUp() {
        #expect(theirs("xxxxxxxx") == "........")
        #expect(theirs("ttxxxtt") == "HH...HH", "a connection down is said by the connection, not here")
    }

    // MARK: Our audio to them

    @Test func aPeerWhoseConnectionNeverComesUpIsConnectingFromOneSecondToTwenty() {
        #expect(ours(String(repeating: "c", count: 25)) == "." + String(repeating: "C", count: 19) + ".....")
    }

    @Test func theirReportListingUsEndsTheConnectingNotice() {
        #expect(ours("ccchhhh") == ".CC....")
        #expect(ours("ccchhcc") == ".CC....", "once heard, a connection going down is not 'connecting'")
    }

    @Test func notListedForFiveSecondsOnAnUpConnectionIsNotGettingOurSound() {
        #expect(ours("hhuuuuuuuh") == ".......GG.")
        #expect(
            ours(String(repeating: "u", count: 30))
                == "." + String(repeating: "C", count: 19) + "....." + "GGGGG",
            "past the connecting notice, an up connection that never lists us")
    }

    @Test func theirNoSoundReportIsNotGettingOurSoundAtOnce() {
        #expect(ours("hhss") == "..GG")
        #expect(ours("ss") == "GG", "their own no-sound report replaces the connecting notice")
    }

    @Test func mutedWeAreNeverToldTheyGetNoSound() {
        #expect(ours("hhssuuuuuuuu", muted: true) == "............")
    }

    @Test func withoutAudioOfOursNothingIsSaidAboutIt() {
        #expect(ours(String(repeating: "c", count: 25), sending: false) == String(repeating: ".", count: 25))
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
