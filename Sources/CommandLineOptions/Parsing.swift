/// What a command line asks for.
public enum Invocation: Hashable, Sendable {
    case run(ParsedArguments)
    /// Help on a command, or (nil) the program's list of commands.
    case help(command: String?)
}

extension CommandTable {
    /// Parses `COMMAND [ARGUMENT | --option VALUE | --option=VALUE | --switch]...` (the words after
    /// the program's name) against the command's own options. `--` ends the options; a word that
    /// does not start with `--` is a plain argument (`-h` asks for help). An option given twice
    /// keeps every value (`values`), the last counting for `value`. No words, `--help` or `-h`
    /// alone, or `help`, ask for the list of commands.
    public func parse(_ words: [String]) throws(UsageError) -> Invocation {
        guard let first = words.first, !Self.asksForHelp(first) else { return .help(command: nil) }
        guard let command = command(named: first) else { throw UsageError(description: unknownCommand(first)) }
        var rest = words.dropFirst()[...]
        if command.name == Self.helpCommandName { return try parseHelp(Array(rest)) }

        var positional: [String] = []
        var values: [String: [String]] = [:]
        var switches: Set<String> = []
        var optionsEnded = false
        while let word = rest.popFirst() {
            if optionsEnded { positional.append(word); continue }
            if word == "--" { optionsEnded = true; continue }
            if Self.asksForHelp(word) { return .help(command: command.name) }
            guard word.hasPrefix("--") else { positional.append(word); continue }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = command.option(named: name) else {
                throw UsageError(description: notAnOption(name, of: command))
            }
            switch option.kind {
            case .flag:
                guard inline == nil else {
                    throw UsageError(description: "--\(name) takes no value (see: \(program) \(command.name) --help)")
                }
                switches.insert(name)
            case .value:
                guard let value = inline ?? rest.popFirst() else {
                    throw UsageError(
                        description:
                            "--\(name) needs a value: \(option.spelled) (see: \(program) \(command.name) --help)")
                }
                values[name, default: []].append(value)
            }
        }
        return .run(ParsedArguments(command: command, positional: positional, values: values, switches: switches))
    }

    private static func asksForHelp(_ word: String) -> Bool { word == "--help" || word == "-h" }

    /// `help`, `help COMMAND`.
    private func parseHelp(_ words: [String]) throws(UsageError) -> Invocation {
        switch words.count {
        case 0:
            return .help(command: nil)
        case 1 where Self.asksForHelp(words[0]):
            return .help(command: Self.helpCommandName)
        case 1:
            guard let command = command(named: words[0]) else {
                throw UsageError(description: unknownCommand(words[0]))
            }
            return .help(command: command.name)
        default:
            throw UsageError(
                description: "help takes one command, e.g. \(program) help \(commands.first?.name ?? "COMMAND")")
        }
    }

    private func unknownCommand(_ word: String) -> String {
        if word.hasPrefix("-") {
            return "\(word) is not an option of \(program) itself; options follow a command (see: \(program) --help)"
        }
        let guess = Suggestion.closest(to: word, among: allCommands.map(\.name))
        return "unknown command '\(word)'\(guess.map { "; did you mean \($0)?" } ?? "") (see: \(program) --help)"
    }

    /// "--policy is an option of share, not of serve", or an unknown option with a guess.
    private func notAnOption(_ name: String, of command: CommandDescription) -> String {
        let see = "(see: \(program) \(command.name) --help)"
        let owners = commands(having: name)
        if !owners.isEmpty {
            return "--\(name) is an option of \(Suggestion.list(owners)), not of \(command.name) \(see)"
        }
        let guess = Suggestion.closest(to: name, among: command.options.map(\.name))
        return "unknown option --\(name) for \(command.name)\(guess.map { "; did you mean --\($0)?" } ?? "") \(see)"
    }
}
