/// The command line, parsed by hand (no outside packages): `sharectl COMMAND [--flag value] [--switch] [ARG...]`.
struct Arguments {
    var command: String
    private var values: [String: String] = [:]
    private var repeated: [String: [String]] = [:]
    private var switches: Set<String> = []
    var positional: [String] = []

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// `valueFlags` take a value (`--duration 10` or `--duration=10`); `switchFlags` take none.
    init(_ arguments: [String], valueFlags: Set<String>, switchFlags: Set<String>) throws {
        guard let first = arguments.first else { command = "help"; return }
        command = first
        var rest = arguments.dropFirst()[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else { positional.append(argument); continue }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if switchFlags.contains(name) {
                guard inline == nil else { throw UsageError(description: "--\(name) takes no value") }
                switches.insert(name)
            } else if valueFlags.contains(name) {
                guard let value = inline ?? rest.popFirst() else { throw UsageError(description: "--\(name) needs a value") }
                values[name] = value
                repeated[name, default: []].append(value)
            } else {
                throw UsageError(description: "unknown option --\(name) for '\(command)' (see: sharectl help)")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
    /// Every value of a flag given more than once, in order (`value` is the last).
    func values(_ name: String) -> [String] { repeated[name] ?? [] }
    mutating func set(_ name: String, _ value: String) { values[name] = value }
    func has(_ name: String) -> Bool { switches.contains(name) }

    func double(_ name: String, default fallback: Double) throws -> Double {
        guard let text = values[name] else { return fallback }
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw UsageError(description: "--\(name) wants a non-negative number, not '\(text)'")
        }
        return value
    }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), value >= 0 else {
            throw UsageError(description: "--\(name) wants a whole non-negative number, not '\(text)'")
        }
        return value
    }
}
