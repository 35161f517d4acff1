/// A description that cannot be read, said the way a person debugging a call wants it:
/// `sdp: line 7: m= line needs at least 4 fields: "m=video 9"`.
public struct SDPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line the problem is on, when it is on one line.
    public var line: Int?
    /// The offending text (the line, or the standalone candidate), shortened if long.
    public var text: String?
    /// What is wrong, in words.
    public var reason: String

    public init(line: Int? = nil, text: String? = nil, reason: String) {
        self.line = line
        self.text = text.map(SDPError.shortened)
        self.reason = reason
    }

    public var description: String {
        var out = "sdp: "
        if let line { out += "line \(line): " }
        out += reason
        if let text { out += ": \"\(text)\"" }
        return out
    }

    /// Lines in hostile input can be long; the message keeps the first 100 characters.
    static func shortened(_ text: String) -> String {
        let limit = 100
        guard text.unicodeScalars.count > limit else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit))) + "…"
    }

    /// The same error, placed on a line of the description.
    func at(line number: Int, text lineText: String) -> SDPError {
        SDPError(line: line ?? number, text: text ?? lineText, reason: reason)
    }
}
