/// A command's options from a file: one `name = value` a line, with the command's long option
/// names (a switch as `name = true` or `false`), `#` starting a comment line, blank lines
/// ignored, and a value optionally in double quotes (kept as it is inside them). It becomes the
/// words it stands for, put before the command line's, so the command line overrides it: the last
/// value of an option counts, and a repeatable option given on the command line replaces the
/// file's values instead of adding to them.
///
/// Unknown keys, a line without `=`, an empty value, a switch that is not true or false, and a
/// key twice are errors that name the file and the line. Values are checked by the command as if
/// they had been typed; `origin(of:)` says which line an option came from, so that error can name
/// it too.
public struct ConfigFile: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var line: Int
        public var key: String
        public var value: String
    }

    public let path: String
    public let entries: [Entry]

    /// Reads `text` (the file at `path`) against `command`'s options. `refused` are keys a file may
    /// not hold (the option that names the file itself, secrets that belong in files of their own).
    public init(
        text: String, path: String, command: CommandDescription, refused: [String: String] = [:]
    ) throws(UsageError) {
        self.path = path
        var entries: [Entry] = []
        var seen: [String: Int] = [:]
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated()
        {
            let number = index + 1
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            func fail(_ what: String) -> UsageError { UsageError(description: "\(path):\(number): \(what)") }
            guard let equals = line.firstIndex(of: "=") else {
                throw fail("'\(line)' is not 'name = value'")
            }
            let key = String(line[..<equals]).trimmingWhitespace()
            var value = String(line[line.index(after: equals)...]).trimmingWhitespace()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard !key.isEmpty else { throw fail("a value without a name") }
            if let why = refused[key] { throw fail("\(key) cannot be set in a config file: \(why)") }
            guard let option = command.option(named: key) else {
                let guess = Suggestion.closest(to: key, among: command.options.map(\.name))
                throw fail(
                    "unknown key '\(key)' for \(command.name)\(guess.map { "; did you mean \($0)?" } ?? "")")
            }
            guard !value.isEmpty else { throw fail("\(key) has no value") }
            if !option.takesValue, Self.boolean(value) == nil {
                throw fail("\(key) is a switch: true or false, not '\(value)'")
            }
            if !option.repeatable, let first = seen[key] {
                throw fail("\(key) is set twice (first on line \(first))")
            }
            seen[key] = seen[key] ?? number
            entries.append(Entry(line: number, key: key, value: value))
        }
        self.entries = entries
    }

    /// The words the file stands for, before `commandLine` (the words after the command's name),
    /// with the command line's repeatable options replacing the file's.
    public func words(before commandLine: [String], command: CommandDescription) -> [String] {
        let given = Set(commandLine.prefix { $0 != "--" }.compactMap(Self.optionName))
        var words: [String] = []
        for entry in entries {
            guard let option = command.option(named: entry.key) else { continue }
            if option.repeatable, given.contains(entry.key) { continue }
            if option.takesValue {
                words.append("--\(entry.key)=\(entry.value)")
            } else if Self.boolean(entry.value) == true, !given.contains(entry.key) {
                words.append("--\(entry.key)")
            }
        }
        return words + commandLine
    }

    /// The line an option's value came from, when the command line did not give it too.
    public func origin(of key: String, commandLine: [String]) -> Int? {
        let given = Set(commandLine.prefix { $0 != "--" }.compactMap(Self.optionName))
        guard !given.contains(key) else { return nil }
        return entries.last { $0.key == key }?.line
    }

    /// An error about an option that came from this file, with its line: "--fps: …" becomes
    /// "--fps: … (PATH:LINE)".
    public func locate(_ error: UsageError, commandLine: [String]) -> UsageError {
        for entry in entries where error.description.contains("--\(entry.key)") {
            if let line = origin(of: entry.key, commandLine: commandLine) {
                return UsageError(description: "\(error.description) (\(path):\(line))")
            }
        }
        return error
    }

    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: return nil
        }
    }

    private static func optionName(_ word: String) -> String? {
        guard word.hasPrefix("--"), word.count > 2 else { return nil }
        let name = word.dropFirst(2)
        return String(name.prefix { $0 != "=" })
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        let characters = Array(self)
        var start = 0
        var end = characters.count
        while start < end, characters[start] == " " || characters[start] == "\t" || characters[start] == "\r" {
            start += 1
        }
        while end > start, characters[end - 1] == " " || characters[end - 1] == "\t" || characters[end - 1] == "\r" {
            end -= 1
        }
        return String(characters[start..<end])
    }
}
