/// A string from the network made safe for a log line or a terminal: control characters (C0, DEL,
/// C1), format characters such as the bidi overrides (U+202E) and zero-width ones, and line and
/// paragraph separators are written as escapes (`\n`, `\r`, `\t`, `\u{1B}`); a backslash is doubled
/// so an escape cannot be forged. Past `limit` characters the rest is cut off and "…" says so.
///
///     logger.notice("refused \(escapedForLog(path))")
public func escapedForLog(_ text: some StringProtocol, limit: Int = 200) -> String {
    var out = ""
    var count = 0
    for scalar in text.unicodeScalars {
        if count == limit {
            out += "…"
            break
        }
        count += 1
        switch scalar {
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}
