// Small text helpers shared by the attribute parsers. They work on Unicode scalars, not
// Characters, so a space followed by a combining mark still separates fields.

/// Splits on runs of spaces and tabs, dropping empty fields.
func fields(_ text: Substring) -> [Substring] {
    text.unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(Substring.init)
}

/// `text` without leading and trailing spaces and tabs.
func trimmed(_ text: Substring) -> Substring {
    let scalars = text.unicodeScalars
    guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
    else { return text[text.endIndex...] }
    return Substring(scalars[first...last])
}

/// Splits at the first `separator`: `("a", "b:c")` for `"a:b:c"`, `("a", nil)` for `"a"`.
func splitOnce(_ text: Substring, at separator: Unicode.Scalar) -> (head: Substring, tail: Substring?) {
    let scalars = text.unicodeScalars
    guard let index = scalars.firstIndex(of: separator) else { return (text, nil) }
    return (Substring(scalars[..<index]), Substring(scalars[scalars.index(after: index)...]))
}

/// A decimal number made only of ASCII digits that fits `T`; throws naming `what` otherwise.
func decimal<T: FixedWidthInteger & UnsignedInteger>(
    _ text: Substring, _ what: String, as _: T.Type = T.self
) throws(SDPError) -> T {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
        throw SDPError(reason: "\(what) must be a decimal number, not \"\(SDPError.shortened(String(text)))\"")
    }
    guard let value = T(text, radix: 10) else {
        throw SDPError(reason: "\(what) \(SDPError.shortened(String(text))) is too large (at most \(T.max))")
    }
    return value
}

/// An RTP payload type, 0–127.
func payloadType(_ text: Substring) throws(SDPError) -> UInt8 {
    let value: UInt8 = try decimal(text, "payload type")
    guard value <= 127 else { throw SDPError(reason: "payload type \(value) is out of range 0–127") }
    return value
}

/// True when `text` has no spaces, tabs or other separators SDP uses between fields.
func isToken(_ text: Substring) -> Bool {
    !text.isEmpty && !text.unicodeScalars.contains(where: { $0 == " " || $0 == "\t" })
}

/// A byte from exactly two ASCII hex digits (`UInt8(_:radix:)` alone would take "+A").
func hexByte<S: Sequence>(_ digits: S) -> UInt8? where S.Element == Unicode.Scalar {
    var value: UInt8 = 0
    var count = 0
    for scalar in digits {
        let nibble: UInt8
        switch scalar {
        case "0"..."9": nibble = UInt8(scalar.value - 0x30)
        case "a"..."f": nibble = UInt8(scalar.value - 0x61 + 10)
        case "A"..."F": nibble = UInt8(scalar.value - 0x41 + 10)
        default: return nil
        }
        count += 1
        guard count <= 2 else { return nil }
        value = value << 4 | nibble
    }
    return count == 2 ? value : nil
}
