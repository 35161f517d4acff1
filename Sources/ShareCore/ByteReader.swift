/// Reads big-endian fields from a byte buffer, one cursor forward. Every read checks its length
/// and throws `WireError.truncated` naming what was being read, so a parser built on it cannot
/// read past the end of hostile input.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    public private(set) var offset: Int
    public let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    public init<S: Sequence>(_ bytes: S) where S.Element == UInt8 { self.init(Array(bytes)) }

    /// A reader over `bytes[range]`, reporting offsets relative to the whole buffer.
    public init(_ bytes: [UInt8], range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range outside buffer")
        self.bytes = bytes
        self.offset = range.lowerBound
        self.end = range.upperBound
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    @inline(__always)
    private func need(_ count: Int, _ what: StaticString) throws(WireError) {
        if count < 0 || remaining < count {
            throw .truncated(what: "\(what)", got: Swift.max(remaining, 0), need: count)
        }
    }

    public mutating func readUInt8(_ what: StaticString = "byte") throws(WireError) -> UInt8 {
        try need(1, what)
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readUInt16(_ what: StaticString = "16-bit field") throws(WireError) -> UInt16 {
        try need(2, what)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func readUInt24(_ what: StaticString = "24-bit field") throws(WireError) -> UInt32 {
        try need(3, what)
        defer { offset += 3 }
        return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
    }

    public mutating func readUInt32(_ what: StaticString = "32-bit field") throws(WireError) -> UInt32 {
        try need(4, what)
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    public mutating func readUInt64(_ what: StaticString = "64-bit field") throws(WireError) -> UInt64 {
        let high = try readUInt32(what)
        let low = try readUInt32(what)
        return UInt64(high) << 32 | UInt64(low)
    }

    public mutating func readBytes(_ count: Int, _ what: StaticString = "bytes") throws(WireError) -> ArraySlice<UInt8>
    {
        try need(count, what)
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    public mutating func skip(_ count: Int, _ what: StaticString = "bytes") throws(WireError) {
        try need(count, what)
        offset += count
    }

    public func peekUInt8(at delta: Int = 0) -> UInt8? {
        let index = offset + delta
        return index >= offset && index < end ? bytes[index] : nil
    }

    /// The rest of the buffer, consuming it.
    public mutating func readRemaining() -> ArraySlice<UInt8> {
        defer { offset = end }
        return bytes[offset..<end]
    }
}
