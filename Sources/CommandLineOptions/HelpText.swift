/// `PROGRAM --help` and `PROGRAM COMMAND --help`, made from the table.
extension CommandTable {
    /// The list of commands, each with its summary.
    public var overview: String {
        var lines = ["usage: \(program) COMMAND [ARGUMENT...] [OPTIONS]", "", "commands:"]
        let rows = allCommands.map { ($0.name, $0.summary) }
        lines += Self.columns(rows)
        lines += [
            "", "\(program) COMMAND --help (or \(program) help COMMAND) says what a command does and lists its options."
        ]
        if !notes.isEmpty { lines += [""] + notes }
        return lines.joined(separator: "\n")
    }

    /// What a command does, how to call it and every option with its default; nil for a command
    /// the table lacks.
    public func help(for name: String) -> String? {
        guard let command = command(named: name) else { return nil }
        let calls = command.synopsis.isEmpty ? [command.options.isEmpty ? "" : "[OPTIONS]"] : command.synopsis
        var lines = calls.enumerated().map { index, call in
            (index == 0 ? "usage: " : "       ") + "\(program) \(command.name)" + (call.isEmpty ? "" : " \(call)")
        }
        if !command.aliases.isEmpty {
            lines.append("   or: " + command.aliases.map { "\(program) \($0)" }.joined(separator: ", "))
        }
        lines += ["", command.summary, "", "options:"]
        var rows = command.options.map { option -> (String, String) in
            var text = option.help
            if let value = option.defaultValue { text += " (default: \(value))" }
            if option.repeatable { text += " (repeatable)" }
            return (option.spelled, text)
        }
        rows.append(("-h, --help", "this text"))
        lines += Self.columns(rows)
        if !command.notes.isEmpty { lines += [""] + command.notes }
        return lines.joined(separator: "\n")
    }

    /// Two columns, the second starting at one place and wrapped at `lineWidth`; a left entry too
    /// long for its column puts its text on the next line.
    static func columns(_ rows: [(String, String)], indent: Int = 2, widest: Int = 30, lineWidth: Int = 100) -> [String]
    {
        let width = min(rows.map(\.0.count).max() ?? 0, widest)
        let pad = String(repeating: " ", count: indent)
        let hanging = pad + String(repeating: " ", count: width + 2)
        return rows.flatMap { left, right -> [String] in
            let text = wrapped(right, width: max(lineWidth - hanging.count, 30))
            if left.count > width {
                return [pad + left] + text.map { hanging + $0 }
            }
            let first = pad + left + String(repeating: " ", count: width - left.count + 2) + (text.first ?? "")
            return [first] + text.dropFirst().map { hanging + $0 }
        }
    }

    /// Words joined into lines of at most `width` characters (a longer word keeps a line to itself).
    static func wrapped(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }
}
