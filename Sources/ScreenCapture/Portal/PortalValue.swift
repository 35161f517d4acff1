/// A D-Bus value as the portal sends and takes it: the subset of GVariant the ScreenCast API uses,
/// as plain Swift values so the rules that read them are testable without a bus.
public indirect enum PortalValue: Sendable, Hashable {
    case bool(Bool)
    case byte(UInt8)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    /// A file descriptor index into the message's fd list (`h`).
    case handle(Int32)
    case array([PortalValue])
    case tuple([PortalValue])
    /// `a{sv}` (and any string-keyed dictionary), keys in the order they came.
    case dictionary([String: PortalValue])
    /// A value of a type this module does not read, by its GVariant type string.
    case other(String)

    public subscript(key: String) -> PortalValue? {
        if case .dictionary(let entries) = self { return entries[key] }
        return nil
    }

    public var uint32: UInt32? {
        switch self {
        case .uint32(let v): v
        case .int32(let v) where v >= 0: UInt32(v)
        default: nil
        }
    }
    public var int: Int? {
        switch self {
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): Int(clamping: v)
        case .byte(let v): Int(v)
        default: nil
        }
    }
    public var string: String? {
        switch self {
        case .string(let s), .objectPath(let s): s
        default: nil
        }
    }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var items: [PortalValue]? {
        switch self {
        case .array(let a), .tuple(let a): a
        default: nil
        }
    }
}
