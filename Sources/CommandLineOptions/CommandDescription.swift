/// One command of a program: `PROGRAM NAME [ARGUMENT...] [OPTIONS]`, with its options.
public struct CommandDescription: Hashable, Sendable {
    /// The word that picks the command: `share`.
    public var name: String
    /// Other words that pick it where the command would stand: `--version` for `version`.
    public var aliases: [String]
    /// One line for the program's list of commands, lower case, no full stop.
    public var summary: String
    /// The ways to call it, each without the program and command name: `"DIR [--out DIR]"`.
    /// Empty: `NAME [OPTIONS]` (or `NAME` when there are no options).
    public var synopsis: [String]
    /// What a shell may offer for each plain argument in turn; the last one repeats.
    public var arguments: [CommandOption.Completion]
    public var options: [CommandOption]
    /// Lines printed after the options: what a command reads on standard input, signals, files.
    public var notes: [String]

    public init(
        _ name: String, aliases: [String] = [], summary: String, synopsis: [String] = [],
        arguments: [CommandOption.Completion] = [], options: [CommandOption] = [], notes: [String] = []
    ) {
        self.name = name
        self.aliases = aliases
        self.summary = summary
        self.synopsis = synopsis
        self.arguments = arguments
        self.options = options
        self.notes = notes
    }

    public func option(named name: String) -> CommandOption? {
        options.first { $0.name == name }
    }
}
