import ShareCore
import Testing

/// Strings from the network reach a log or a terminal escaped: no ESC, CR, LF or bidi override.
@Suite struct LogEscapingTests {
    @Test func controlAndFormatCharactersAreEscaped() {
        #expect(escapedForLog("/r/a\u{1B}[2Jb") == "/r/a\\u{1B}[2Jb")
        #expect(escapedForLog("one\r\ntwo\tthree") == "one\\r\\ntwo\\tthree")
        #expect(escapedForLog("abc\u{202E}fed") == "abc\\u{202E}fed")
        #expect(escapedForLog("zero\u{200B}width") == "zero\\u{200B}width")
        #expect(escapedForLog("\u{85}\u{7F}\u{2028}") == "\\u{85}\\u{7F}\\u{2028}")
    }

    @Test func aBackslashCannotForgeAnEscape() {
        #expect(escapedForLog("a\\nb") == "a\\\\nb")
    }

    @Test func printableTextIsKeptAndLongTextCut() {
        #expect(escapedForLog("Ana Müller 画面 🎉") == "Ana Müller 画面 🎉")
        #expect(escapedForLog(String(repeating: "x", count: 300), limit: 10) == "xxxxxxxxxx…")
        #expect(escapedForLog("short", limit: 5) == "short")
    }
}
