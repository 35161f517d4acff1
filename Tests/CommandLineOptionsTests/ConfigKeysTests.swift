import CommandLineOptions
import Testing

@Suite struct ConfigKeysTests {
    @Test func aCommandsConfigKeysAreItsLongOptionNamesInOrder() throws {
        let table = Sample.table
        #expect(table.configKeys(for: "serve") == ["listen", "grace", "allow-origin", "verbose"])
        #expect(table.configKeys(for: "version") == [])
        #expect(table.configKeys(for: "--version") == [], "an alias names its command")
        #expect(table.configKeys(for: "nothing") == nil)
        for command in table.commands {
            #expect(table.configKeys(for: command.name) == command.options.map(\.name))
        }
        let grace = try #require(table.command(named: "serve")?.option(named: "grace"))
        #expect(
            grace.takesValue && !grace.repeatable && grace.defaultValue == "15",
            "what a file reader needs to know of a key")
    }
}
