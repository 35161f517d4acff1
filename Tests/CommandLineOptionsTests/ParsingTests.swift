import CommandLineOptions
import Testing

@Suite struct ParsingTests {
    let table = Sample.table

    func run(_ words: String) throws -> ParsedArguments {
        guard case .run(let parsed) = try table.parse(words.split(separator: " ").map(String.init)) else {
            Issue.record("'\(words)' did not parse to a command")
            throw UsageError(description: "not a command")
        }
        return parsed
    }

    func refusal(_ words: String) -> String? {
        do {
            _ = try table.parse(words.split(separator: " ").map(String.init))
            return nil
        } catch {
            return error.description
        }
    }

    @Test func valuesSwitchesAndPlainArgumentsParse() throws {
        let parsed = try run("send --to http://x/whip --duration=10 --no-audio extra --policy detail")
        #expect(parsed.command == "send")
        #expect(parsed.value("to") == "http://x/whip")
        #expect(parsed.value("duration") == "10", "--name=value")
        #expect(parsed.has("no-audio") && !parsed.has("verbose"))
        #expect(parsed.value("policy") == "detail")
        #expect(parsed.positional == ["extra"])
    }

    @Test func anOptionGivenTwiceKeepsEveryValueAndTheLastCounts() throws {
        let parsed = try run("serve --allow-origin https://a.example --allow-origin=https://b.example")
        #expect(parsed.values("allow-origin") == ["https://a.example", "https://b.example"])
        #expect(parsed.value("allow-origin") == "https://b.example")
    }

    @Test func aValueMayStartWithDashes() throws {
        #expect(
            try run("send --to --no-audio").value("to") == "--no-audio",
            "the word after an option that takes a value is its value")
        #expect(try run("send --to=").value("to") == "", "an empty inline value is a value")
    }

    @Test func doubleDashEndsTheOptions() throws {
        let parsed = try run("report -- --out")
        #expect(parsed.positional == ["--out"] && parsed.value("out") == nil)
        #expect(try run("report -").positional == ["-"], "a lone dash is a plain argument")
    }

    @Test func theTablesDefaultsFillIn() throws {
        let parsed = try run("serve --grace 20")
        #expect(try parsed.double("grace") == 20)
        #expect(try run("serve").double("grace") == 15)
        #expect(try run("serve").int("grace") == 15)
        #expect(parsed.valueOrDefault("listen") == "127.0.0.1:8080")
        #expect(parsed.value("listen") == nil, "value is only what was given")
        #expect(try parsed.int("missing", default: 7) == 7)
    }

    @Test func numbersAreChecked() throws {
        #expect(throws: UsageError(description: "--grace wants a non-negative number, not 'soon'")) {
            try run("serve --grace soon").double("grace")
        }
        #expect(throws: UsageError(description: "--duration wants a whole non-negative number, not '-1'")) {
            try run("send --duration -1").int("duration")
        }
    }

    @Test func anUnknownOptionIsRefusedWithAGuessAndAPointerToHelp() {
        #expect(
            refusal("send --polcy detail")
                == "unknown option --polcy for send; did you mean --policy? (see: tool send --help)")
        #expect(
            refusal("send --stats x")
                == "unknown option --stats for send; did you mean --stats-json? (see: tool send --help)",
            "the only option that starts with it")
        #expect(refusal("send --frobnicate") == "unknown option --frobnicate for send (see: tool send --help)")
    }

    @Test func anOptionOfAnotherCommandSaysWhoseItIs() {
        #expect(
            refusal("serve --policy detail") == "--policy is an option of send, not of serve (see: tool serve --help)")
        #expect(
            refusal("send --out x") == "--out is an option of report and check, not of send (see: tool send --help)")
        #expect(
            refusal("version --grace=3") == "--grace is an option of serve, not of version (see: tool version --help)")
    }

    @Test func aMissingValueSaysWhatTheOptionWants() {
        #expect(refusal("send --to") == "--to needs a value: --to URL (see: tool send --help)")
        #expect(refusal("serve --verbose --grace") == "--grace needs a value: --grace SECONDS (see: tool serve --help)")
    }

    @Test func aSwitchTakesNoValue() {
        #expect(refusal("send --no-audio=yes") == "--no-audio takes no value (see: tool send --help)")
    }

    @Test func unknownCommandsAndOptionsBeforeACommandAreRefused() {
        #expect(refusal("sned") == "unknown command 'sned'; did you mean send? (see: tool --help)")
        #expect(refusal("launch") == "unknown command 'launch' (see: tool --help)")
        #expect(
            refusal("--verbose send")
                == "--verbose is not an option of tool itself; options follow a command (see: tool --help)")
    }

    @Test func helpIsAskedForInEveryUsualWay() throws {
        #expect(try table.parse([]) == .help(command: nil))
        #expect(try table.parse(["--help"]) == .help(command: nil))
        #expect(try table.parse(["-h"]) == .help(command: nil))
        #expect(try table.parse(["help"]) == .help(command: nil))
        #expect(try table.parse(["help", "serve"]) == .help(command: "serve"))
        #expect(try table.parse(["help", "--version"]) == .help(command: "version"), "an alias names its command")
        #expect(try table.parse(["help", "--help"]) == .help(command: "help"))
        #expect(try table.parse(["send", "--help"]) == .help(command: "send"))
        #expect(try table.parse(["send", "--to", "x", "-h"]) == .help(command: "send"))
        #expect(try table.parse(["send", "--to=--help"]) != .help(command: "send"), "a value is not a question")
        #expect(throws: UsageError(description: "unknown command 'nothing' (see: tool --help)")) {
            try table.parse(["help", "nothing"])
        }
        #expect(throws: UsageError.self) { try table.parse(["help", "send", "serve"]) }
    }

    @Test func anAliasPicksItsCommand() throws {
        #expect(try run("--version").command == "version")
    }

    @Test func theSampleTableIsSound() {
        #expect(table.problems() == [])
    }

    @Test func aTableWithMistakesSaysWhich() {
        let broken = CommandTable(
            program: "tool",
            commands: [
                CommandDescription(
                    "a", summary: "a",
                    options: [
                        .flag("x", "x"), .value("x", "X", "again"), .value("help", "H", "hides --help"),
                        CommandOption(name: "y", kind: .flag, defaultValue: "1", help: "a switch with a default")
                    ]),
                CommandDescription("b", aliases: ["a"], summary: "b"),
                CommandDescription("help", summary: "hides the built-in help")
            ])
        #expect(
            broken.problems() == [
                "a: --x twice", "a: an option cannot be named 'help'",
                "a: --y is a switch: it has no default and does not repeat",
                "'a' picks more than one command", "'help' picks more than one command"
            ])
    }
}
