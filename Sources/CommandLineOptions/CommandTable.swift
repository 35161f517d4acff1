/// Every command of a program and its options: the one table its command line is parsed against
/// and its help, usage errors, config-file keys and shell completions are made from. A pure value:
/// nothing here reads or writes.
///
/// `help` is built in: `PROGRAM help [COMMAND]`, `PROGRAM --help`, `PROGRAM COMMAND --help` (or `-h`).
public struct CommandTable: Sendable {
    public static let helpCommandName = "help"

    public let program: String
    /// In the order help lists them.
    public let commands: [CommandDescription]
    /// Lines printed after the list of commands.
    public let notes: [String]

    public init(program: String, commands: [CommandDescription], notes: [String] = []) {
        self.program = program
        self.commands = commands
        self.notes = notes
    }

    /// The built-in `help` as a command like the others (for the list and the completions).
    public var helpCommand: CommandDescription {
        CommandDescription(
            Self.helpCommandName, summary: "this text, or what a command does and its options",
            synopsis: ["[COMMAND]"], arguments: [.words(commands.map(\.name))])
    }

    /// The table's commands and `help`.
    public var allCommands: [CommandDescription] { commands + [helpCommand] }

    /// The command a word picks: its name or one of its aliases.
    public func command(named word: String) -> CommandDescription? {
        allCommands.first { $0.name == word || $0.aliases.contains(word) }
    }

    /// The keys a config file for `command` may take, `name = value` with the long option names
    /// (a switch as `name = true`), in the table's order; nil for a command the table lacks.
    /// `command(named:)?.option(named:)` says whether a key takes a value and whether it repeats.
    public func configKeys(for command: String) -> [String]? {
        self.command(named: command)?.options.map(\.name)
    }

    /// The other commands that have an option of this name.
    func commands(having option: String) -> [String] {
        commands.filter { $0.option(named: option) != nil }.map(\.name)
    }

    /// What is wrong with the table itself: a name twice, an option named like the built-in help,
    /// a default for a switch. Empty when the table is sound (a test says so).
    public func problems() -> [String] {
        var found: [String] = []
        var words: Set<String> = []
        for command in allCommands {
            for word in [command.name] + command.aliases where !words.insert(word).inserted {
                found.append("'\(word)' picks more than one command")
            }
            var names: Set<String> = []
            for option in command.options {
                if !names.insert(option.name).inserted { found.append("\(command.name): --\(option.name) twice") }
                if option.name == "help" || option.name.isEmpty || option.name.hasPrefix("-")
                    || option.name.contains("=")
                    || option.name.contains(where: \.isWhitespace)
                {
                    found.append("\(command.name): an option cannot be named '\(option.name)'")
                }
                if !option.takesValue, option.defaultValue != nil || option.repeatable {
                    found.append("\(command.name): --\(option.name) is a switch: it has no default and does not repeat")
                }
                if option.help.isEmpty || option.help.contains("\n") {
                    found.append("\(command.name): --\(option.name) wants one line of help")
                }
            }
        }
        return found
    }
}
