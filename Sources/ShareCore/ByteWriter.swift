/// Appends big-endian fields to a growing byte buffer.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func write(_ value: UInt8) { bytes.append(value) }

    public mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func writeUInt24(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func write(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func write(_ value: UInt64) {
        write(UInt32(truncatingIfNeeded: value >> 32))
        write(UInt32(truncatingIfNeeded: value))
    }

    public mutating func write<C: Collection>(contentsOf data: C) where C.Element == UInt8 {
        bytes.append(contentsOf: data)
    }

    public mutating func writeZeros(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    /// Overwrites a 16-bit field already written, e.g. a length known only at the end.
    public mutating func patch(_ value: UInt16, at index: Int) {
        bytes[index] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[index + 1] = UInt8(truncatingIfNeeded: value)
    }

    public mutating func patch(_ value: UInt8, at index: Int) { bytes[index] = value }
}
