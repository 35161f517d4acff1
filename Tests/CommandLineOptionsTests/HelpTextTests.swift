@testable import CommandLineOptions
import Testing

@Suite struct HelpTextTests {
    let table = Sample.table

    @Test func aCommandsHelpShowsEveryOptionWithItsPlaceholderAndDefault() throws {
        for command in table.commands {
            let help = try #require(table.help(for: command.name))
            for option in command.options {
                #expect(
                    help.contains("  " + option.spelled + " ") || help.contains("  " + option.spelled + "\n"),
                    "\(command.name) --help lacks \(option.spelled)")
                if let value = option.defaultValue { #expect(help.contains("(default: \(value))")) }
            }
            #expect(help.contains("-h, --help"))
            #expect(help.contains(command.summary))
        }
    }

    @Test func aCommandsHelpReadsLikeThis() {
        #expect(
            table.help(for: "serve") == """
                usage: tool serve [OPTIONS]

                serve a room

                options:
                  --listen HOST:PORT     where it listens (default: 127.0.0.1:8080)
                  --grace SECONDS        how long a place is kept (default: 15)
                  --allow-origin ORIGIN  another site that may connect (repeatable)
                  --verbose              log each step
                  -h, --help             this text
                """)
        #expect(table.help(for: "--version")?.hasPrefix("usage: tool version\n   or: tool --version\n") == true)
        #expect(table.help(for: "nothing") == nil)
    }

    @Test func theOverviewListsEveryCommandAndHelp() {
        let overview = table.overview
        for command in table.commands + [table.helpCommand] {
            #expect(overview.contains("  \(command.name) ") && overview.contains(command.summary))
        }
        #expect(overview.contains("tool COMMAND --help"))
    }

    @Test func longTextWrapsUnderItsColumn() {
        let lines = CommandTable.columns(
            [("--a", String(repeating: "word ", count: 40)), ("--a-very-long-option-name PLACEHOLDER", "short")])
        let column = String(repeating: " ", count: 2 + 30 + 2)  // indent, the widest left entry kept in line, gap
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(lines)")
        #expect(lines[0].hasPrefix("  --a" + String(repeating: " ", count: 29) + "word"))
        #expect(lines[1].hasPrefix(column + "word"))
        #expect(
            lines.suffix(2) == ["  --a-very-long-option-name PLACEHOLDER", column + "short"],
            "too long for the column: text below")
    }
}
