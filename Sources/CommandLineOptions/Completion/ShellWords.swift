/// Quoting for the completion scripts.
enum ShellWords {
    /// A single-quoted shell word.
    static func quoted(_ text: String) -> String {
        "'" + text.map { $0 == "'" ? #"'\''"# : String($0) }.joined() + "'"
    }

    /// `text` with a backslash before each of `characters`.
    static func escaping(_ characters: String, in text: String) -> String {
        text.map { characters.contains($0) ? "\\\($0)" : String($0) }.joined()
    }

    /// A shell function name made from a program name.
    static func identifier(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}
