/// The fuzzer's bytes read as a script: small integers and byte runs taken from the front, zeros
/// once the input is used up (so every input is a whole script). Shared by the fuzz targets that
/// interpret their input as a sequence of steps.
public struct ScriptInput {
    public let bytes: [UInt8]
    public private(set) var index = 0

    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    }

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var atEnd: Bool { index >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    public mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }
    public mutating func uint32() -> UInt32 { UInt32(uint16()) << 16 | UInt32(uint16()) }

    /// Up to `count` bytes (fewer at the end).
    public mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, index + max(0, count))
        defer { index = end }
        return Array(bytes[index..<end])
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] { take(bytes.count - index) }
}

/// A libFuzzer check: stops the run with `message` when `condition` is false. `precondition` is
/// compiled out of -Ounchecked builds; this is not.
public func check(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
