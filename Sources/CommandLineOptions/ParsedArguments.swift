/// A command line that parsed: the command, the options given, and the plain arguments in order.
/// `value(_:)` is only what was given; `valueOrDefault(_:)`, `int(_:)` and `double(_:)` fall back to
/// the default the command's table declares (reading one without a default is a mistake in the
/// program, and stops it).
public struct ParsedArguments: Hashable, Sendable {
    public typealias UsageError = CommandLineOptions.UsageError

    public var command: String
    public var positional: [String]
    private var given: [String: [String]]
    private var switches: Set<String>
    private let options: [String: CommandOption]

    public init(
        command: CommandDescription, positional: [String] = [], values: [String: [String]] = [:],
        switches: Set<String> = []
    ) {
        self.command = command.name
        self.positional = positional
        given = values
        self.switches = switches
        options = Dictionary(command.options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The value given last, or nil.
    public func value(_ name: String) -> String? { given[name]?.last }

    /// Every value of an option given more than once, in order (`value` is the last).
    public func values(_ name: String) -> [String] { given[name] ?? [] }

    /// The value given, else the table's default (which there must be).
    public func valueOrDefault(_ name: String) -> String { required(name) }

    public func has(_ name: String) -> Bool { switches.contains(name) }

    /// Sets a value as if it had been given.
    public mutating func set(_ name: String, _ value: String) { given[name] = [value] }

    /// A whole non-negative number: the value given, else `fallback`.
    public func int(_ name: String, default fallback: Int) throws(UsageError) -> Int {
        guard let text = value(name) else { return fallback }
        return try Self.int(name, text)
    }

    /// A whole non-negative number: the value given, else the table's default (which must be one).
    public func int(_ name: String) throws(UsageError) -> Int {
        try Self.int(name, required(name))
    }

    /// A finite non-negative number: the value given, else `fallback`.
    public func double(_ name: String, default fallback: Double) throws(UsageError) -> Double {
        guard let text = value(name) else { return fallback }
        return try Self.double(name, text)
    }

    /// A finite non-negative number: the value given, else the table's default (which must be one).
    public func double(_ name: String) throws(UsageError) -> Double {
        try Self.double(name, required(name))
    }

    private func required(_ name: String) -> String {
        guard let text = value(name) ?? options[name]?.defaultValue else {
            preconditionFailure("--\(name) of \(command) was read with the table's default, but it declares none")
        }
        return text
    }

    private static func int(_ name: String, _ text: String) throws(UsageError) -> Int {
        guard let value = Int(text), value >= 0 else {
            throw UsageError(description: "--\(name) wants a whole non-negative number, not '\(text)'")
        }
        return value
    }

    private static func double(_ name: String, _ text: String) throws(UsageError) -> Double {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw UsageError(description: "--\(name) wants a non-negative number, not '\(text)'")
        }
        return value
    }
}
