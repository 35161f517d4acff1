import ShareCore

/// Reads arbitrary bytes as a sequence of typed fields; every read must either succeed or throw.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    var reader = ByteReader(bytes)
    while !reader.isAtEnd {
        guard let selector = try? reader.readUInt8() else { break }
        do {
            switch selector % 6 {
            case 0: _ = try reader.readUInt16()
            case 1: _ = try reader.readUInt24()
            case 2: _ = try reader.readUInt32()
            case 3: _ = try reader.readUInt64()
            case 4: _ = try reader.readBytes(Int(selector >> 3))
            default: try reader.skip(Int(selector >> 4))
            }
        } catch {
            precondition(!error.description.isEmpty)
            break
        }
    }
    return 0
}
