import CommandLineOptions
import Testing

/// A command's options from a `name = value` file, overridden by the command line.
@Suite struct ConfigFileTests {
    let send = Sample.table.command(named: "send")!
    let serve = Sample.table.command(named: "serve")!

    func read(_ text: String, _ command: CommandDescription? = nil, refused: [String: String] = [:])
        throws(UsageError) -> ConfigFile
    {
        try ConfigFile(text: text, path: "tool.conf", command: command ?? send, refused: refused)
    }

    func error(_ text: String, refused: [String: String] = [:]) -> String? {
        do {
            _ = try read(text, refused: refused)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func linesBecomeTheWordsTheyStandForBeforeTheCommandLine() throws {
        let file = try read(
            """
            # a kiosk
            to = https://ingest.example/whip

            policy=detail
              duration = "3600"
            no-audio = true
            verbose = false
            source = "portal:window"
            """)
        #expect(file.entries.map(\.line) == [2, 4, 5, 6, 7, 8])
        let words = file.words(before: ["--duration", "60"], command: send)
        #expect(
            words == [
                "--to=https://ingest.example/whip", "--policy=detail", "--duration=3600", "--no-audio",
                "--source=portal:window", "--duration", "60"
            ])
        guard case .run(let parsed) = try Sample.table.parse(["send"] + words) else {
            Issue.record("help")
            return
        }
        #expect(parsed.value("duration") == "60", "the command line overrides the file")
        #expect(parsed.value("policy") == "detail" && parsed.has("no-audio") && !parsed.has("verbose"))
        #expect(file.origin(of: "policy", commandLine: ["--duration", "60"]) == 4)
        #expect(file.origin(of: "duration", commandLine: ["--duration", "60"]) == nil)
    }

    @Test func aRepeatableOptionOnTheCommandLineReplacesTheFilesValues() throws {
        let file = try read("allow-origin = https://a.example\nallow-origin = https://b.example\n", serve)
        #expect(
            file.words(before: [], command: serve) == [
                "--allow-origin=https://a.example", "--allow-origin=https://b.example"
            ])
        #expect(
            file.words(before: ["--allow-origin", "https://c.example"], command: serve)
                == ["--allow-origin", "https://c.example"])
    }

    @Test func badLinesAreErrorsThatNameTheLine() {
        #expect(error("to = x\npolicy detail\n") == "tool.conf:2: 'policy detail' is not 'name = value'")
        #expect(error("\n\npolcy = detail") == "tool.conf:3: unknown key 'polcy' for send; did you mean policy?")
        #expect(error("listen = 127.0.0.1:1") == "tool.conf:1: unknown key 'listen' for send")
        #expect(error("to =   ") == "tool.conf:1: to has no value")
        #expect(error("= x") == "tool.conf:1: a value without a name")
        #expect(error("no-audio = maybe") == "tool.conf:1: no-audio is a switch: true or false, not 'maybe'")
        #expect(error("to = a\n# again\nto = b") == "tool.conf:3: to is set twice (first on line 1)")
        #expect(
            error("to = a\nstats-json = s", refused: ["stats-json": "not here"])
                == "tool.conf:2: stats-json cannot be set in a config file: not here")
    }

    @Test func anErrorAboutAValueFromTheFileNamesItsLine() throws {
        let file = try read("to = x\nduration = soon\n")
        let error = UsageError(description: "--duration wants a number of seconds, not 'soon'")
        #expect(
            file.locate(error, commandLine: []).description
                == "--duration wants a number of seconds, not 'soon' (tool.conf:2)")
        #expect(file.locate(error, commandLine: ["--duration=soon"]) == error, "the command line gave it")
    }

    /// Whatever the bytes, reading a file gives entries or an error that names a line; never a crash.
    @Test func arbitraryTextNeverCrashes() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["=", " ", "\n", "#", "\"", "to", "no-audio", "true", "x", "\r", "\t", "é", "\u{0}", "--"]
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in pieces.randomElement()! }.joined()
            do {
                let file = try read(text)
                _ = file.words(before: [], command: send)
            } catch {
                #expect(error.description.hasPrefix("tool.conf:"), "\(error.description)")
            }
        }
    }
}
