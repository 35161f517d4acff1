import ShareCore
import Testing

@Suite struct ByteReaderTests {
    @Test func readsBigEndianFields() throws {
        var reader = ByteReader([0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x01])
        #expect(try reader.readUInt16() == 0x1234)
        #expect(try reader.readUInt24() == 0x56789A)
        #expect(try reader.readUInt8() == 0xBC)
        #expect(reader.remaining == 3)
        #expect(throws: WireError.truncated(what: "sequence number", got: 3, need: 4)) {
            try reader.readUInt32("sequence number")
        }
        #expect(reader.remaining == 3, "a failed read consumes nothing")
    }

    @Test func truncationMessageSaysWhatAndHowMuch() {
        let error = WireError.truncated(what: "rtcp: packet", got: 6, need: 8)
        #expect(error.description == "rtcp: packet too short (got 6 bytes, need 8)")
    }

    @Test func writerRoundTripsThroughReader() throws {
        var writer = ByteWriter()
        writer.write(UInt8(0xAB))
        writer.write(UInt16(0xCDEF))
        writer.writeUInt24(0x123456)
        writer.write(UInt32(0xDEADBEEF))
        writer.write(UInt64(0x0102030405060708))
        writer.patch(UInt16(0x9999), at: 1)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readUInt8() == 0xAB)
        #expect(try reader.readUInt16() == 0x9999)
        #expect(try reader.readUInt24() == 0x123456)
        #expect(try reader.readUInt32() == 0xDEADBEEF)
        #expect(try reader.readUInt64() == 0x0102030405060708)
        #expect(reader.isAtEnd)
    }

    @Test func subrangeReaderStopsAtItsEnd() throws {
        var reader = ByteReader([1, 2, 3, 4, 5], range: 1..<3)
        #expect(try reader.readUInt16() == 0x0203)
        #expect(throws: WireError.self) { try reader.readUInt8() }
    }
}
