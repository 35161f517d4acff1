/// One option of one command, declared once: its long name, the placeholder for its value (none
/// for a switch), its default and one line of help. Help text, usage errors, the keys a config
/// file may take and the shell completions are all made from these.
public struct CommandOption: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// `--name` alone.
        case flag
        /// `--name VALUE` or `--name=VALUE`; `placeholder` is what help shows for VALUE.
        case value(placeholder: String)
    }

    /// What a shell may offer for a value (or for a command's plain arguments).
    public enum Completion: Hashable, Sendable {
        /// Nothing to offer: a number, a URL, a name.
        case none
        /// These words.
        case words([String])
        case file
        case directory
    }

    /// The long name without its dashes: `duration` for `--duration`.
    public var name: String
    public var kind: Kind
    /// The value the command takes when the option is not given: a value as it could be given
    /// (a config file could hold it), which help shows and `ParsedArguments.int(_:)`, `double(_:)`
    /// and `valueOrDefault(_:)` fall back to. Nil when there is none, or when it depends on other
    /// options or on the machine (then the help line says so).
    public var defaultValue: String?
    /// One line, lower case, no full stop.
    public var help: String
    /// Whether every value given counts (`ParsedArguments.values`), not only the last.
    public var repeatable: Bool
    public var completion: Completion

    public init(
        name: String, kind: Kind, defaultValue: String? = nil, help: String, repeatable: Bool = false,
        completion: Completion = .none
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.repeatable = repeatable
        self.completion = completion
    }

    /// `--name PLACEHOLDER`.
    public static func value(
        _ name: String, _ placeholder: String, default defaultValue: String? = nil,
        repeatable: Bool = false, completion: Completion = .none, _ help: String
    ) -> CommandOption {
        CommandOption(
            name: name, kind: .value(placeholder: placeholder), defaultValue: defaultValue, help: help,
            repeatable: repeatable, completion: completion)
    }

    /// `--name a|b|c`: the placeholder lists the words and a shell offers them.
    public static func choice(
        _ name: String, _ words: [String], default defaultValue: String? = nil,
        _ help: String
    ) -> CommandOption {
        value(name, words.joined(separator: "|"), default: defaultValue, completion: .words(words), help)
    }

    /// `--name`, a switch.
    public static func flag(_ name: String, _ help: String) -> CommandOption {
        CommandOption(name: name, kind: .flag, help: help)
    }

    public var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    /// `--name` or `--name PLACEHOLDER`, as help and usage errors show it.
    public var spelled: String {
        switch kind {
        case .flag: return "--\(name)"
        case .value(let placeholder): return "--\(name) \(placeholder)"
        }
    }
}
