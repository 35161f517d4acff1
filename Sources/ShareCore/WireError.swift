/// A wire-format error a person can read: what was being parsed, what was wrong, and the numbers.
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input ended before a field: "rtcp: packet too short (got 6 bytes, need 8)".
    case truncated(what: String, got: Int, need: Int)
    /// A field holds a value the format does not allow.
    case invalid(what: String, reason: String)
    /// A feature the format allows but this implementation does not carry.
    case unsupported(what: String, reason: String)

    public var description: String {
        switch self {
        case let .truncated(what, got, need):
            return "\(what) too short (got \(got) bytes, need \(need))"
        case let .invalid(what, reason):
            return "\(what): \(reason)"
        case let .unsupported(what, reason):
            return "\(what): not supported: \(reason)"
        }
    }
}
