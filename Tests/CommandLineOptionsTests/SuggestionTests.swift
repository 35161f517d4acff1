@testable import CommandLineOptions
import Testing

@Suite struct SuggestionTests {
    @Test func distanceCountsLettersPutInTakenOutOrChanged() {
        #expect(Suggestion.distance(Array("policy"), Array("polcy")) == 1)
        #expect(Suggestion.distance(Array("kitten"), Array("sitting")) == 3)
        #expect(Suggestion.distance(Array(""), Array("abc")) == 3)
        #expect(Suggestion.distance(Array("same"), Array("same")) == 0)
        #expect(Suggestion.distance(Array("sned"), Array("send")) == 1, "two letters swapped are one slip")
        #expect(Suggestion.distance(Array("ca"), Array("abc")) == 3, "each letter is edited once")
    }

    @Test func aGuessIsMadeOnlyWhenItIsClose() {
        #expect(Suggestion.closest(to: "polcy", among: ["policy", "fps"]) == "policy")
        #expect(Suggestion.closest(to: "zzz", among: ["policy", "fps"]) == nil)
        #expect(
            Suggestion.closest(to: "turn", among: ["turn-user", "turn-credential"]) == nil, "two extend it: no guess")
        #expect(Suggestion.closest(to: "stats", among: ["stats-json", "fps"]) == "stats-json")
    }

    @Test func listsReadAsASentence() {
        #expect(Suggestion.list(["a"]) == "a")
        #expect(Suggestion.list(["a", "b"]) == "a and b")
        #expect(Suggestion.list(["a", "b", "c"]) == "a, b and c")
    }
}
