import ScreenCapture
import ShareCore
import Testing

@Suite struct FrameAssemblerTests {
    /// A buffer of `width`×`height` BGRx pixels whose bytes say where they are: B = x, G = y, R = tag;
    /// row padding is 0xEE.
    func buffer(width: Int, height: Int, stride: Int, tag: UInt8) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: stride * height)
        for y in 0..<height {
            for x in 0..<width {
                bytes[y * stride + x * 4] = UInt8(x)
                bytes[y * stride + x * 4 + 1] = UInt8(y)
                bytes[y * stride + x * 4 + 2] = tag
                bytes[y * stride + x * 4 + 3] = 0
            }
        }
        return bytes
    }

    func pixel(_ frame: VideoFrame, _ x: Int, _ y: Int) -> [UInt8] {
        let i = y * frame.planes[0].stride + x * 4
        return Array(frame.planes[0].bytes[i..<i + 3])
    }

    @Test func honoursStrideAndCrop() throws {
        var assembler = FrameAssembler(format: .bgrx)
        let source = buffer(width: 8, height: 6, stride: 40, tag: 1)  // 8 bytes of padding a row
        try source.withUnsafeBytes {
            _ = try assembler.take(
                $0, stride: 40, bufferWidth: 8, bufferHeight: 6,
                crop: .init(x: 2, y: 1, width: 4, height: 3), damage: nil)
        }
        let frame = try #require(assembler.frame(cursor: nil, captureMicros: 5, sequence: 1))
        #expect(frame.width == 4 && frame.height == 3 && frame.planes[0].stride == 16)
        #expect(pixel(frame, 0, 0) == [2, 1, 1])
        #expect(pixel(frame, 3, 2) == [5, 3, 1])
        #expect(!frame.planes[0].bytes.contains(0xEE))  // no padding copied
    }

    @Test func copiesOnlyDamagedRegionsOnceAPictureIsKept() throws {
        var assembler = FrameAssembler(format: .bgrx)
        let first = buffer(width: 8, height: 8, stride: 32, tag: 1)
        let second = buffer(width: 8, height: 8, stride: 32, tag: 2)
        let whole = try first.withUnsafeBytes {
            try assembler.take(
                $0, stride: 32, bufferWidth: 8, bufferHeight: 8, crop: nil,
                damage: [.init(x: 0, y: 0, width: 1, height: 1)])
        }
        #expect(whole == 64)  // the first buffer is copied whole whatever its damage says
        let copied = try second.withUnsafeBytes {
            try assembler.take(
                $0, stride: 32, bufferWidth: 8, bufferHeight: 8, crop: nil,
                damage: [.init(x: 2, y: 2, width: 2, height: 2), .init(x: 6, y: 6, width: 10, height: 10)])
        }
        #expect(copied == 4 + 4)  // the second rectangle is clipped to the picture
        let frame = try #require(assembler.frame(cursor: nil, captureMicros: 0, sequence: 2))
        #expect(pixel(frame, 2, 2)[2] == 2 && pixel(frame, 7, 7)[2] == 2)
        #expect(pixel(frame, 0, 0)[2] == 1 && pixel(frame, 5, 2)[2] == 1)  // undamaged: kept from before
    }

    /// A whole buffer goes into fresh bytes: a frame handed out before keeps its picture, and the
    /// damaged buffers after it build on the new one.
    @Test func aWholeBufferLeavesEarlierFramesAsTheyWere() throws {
        var assembler = FrameAssembler(format: .bgrx)
        let first = buffer(width: 8, height: 4, stride: 36, tag: 1)
        let second = buffer(width: 8, height: 4, stride: 36, tag: 2)
        let third = buffer(width: 8, height: 4, stride: 36, tag: 3)
        _ = try first.withUnsafeBytes {
            try assembler.take($0, stride: 36, bufferWidth: 8, bufferHeight: 4, crop: nil, damage: nil)
        }
        let earlier = try #require(assembler.frame(cursor: nil, captureMicros: 0, sequence: 1))
        let whole = try second.withUnsafeBytes {
            try assembler.take($0, stride: 36, bufferWidth: 8, bufferHeight: 4, crop: nil, damage: nil)
        }
        #expect(whole == 32)
        let later = try #require(assembler.frame(cursor: nil, captureMicros: 0, sequence: 2))
        #expect(pixel(earlier, 0, 0) == [0, 0, 1] && pixel(earlier, 7, 3) == [7, 3, 1])
        #expect(pixel(later, 0, 0) == [0, 0, 2] && pixel(later, 7, 3) == [7, 3, 2])
        #expect(!later.planes[0].bytes.contains(0xEE))  // no padding copied
        _ = try third.withUnsafeBytes {
            try assembler.take(
                $0, stride: 36, bufferWidth: 8, bufferHeight: 4, crop: nil,
                damage: [.init(x: 1, y: 1, width: 2, height: 1)])
        }
        let last = try #require(assembler.frame(cursor: nil, captureMicros: 0, sequence: 3))
        #expect(pixel(last, 1, 1)[2] == 3 && pixel(last, 2, 1)[2] == 3 && pixel(last, 0, 0)[2] == 2)
        #expect(pixel(later, 1, 1)[2] == 2, "the frame before the damage keeps its picture")
    }

    @Test func aChangedSizeIsCopiedWholeAndATooSmallBufferIsRefused() throws {
        var assembler = FrameAssembler(format: .bgrx)
        let small = buffer(width: 4, height: 4, stride: 16, tag: 1)
        try small.withUnsafeBytes {
            _ = try assembler.take($0, stride: 16, bufferWidth: 4, bufferHeight: 4, crop: nil, damage: nil)
        }
        let bigger = buffer(width: 6, height: 4, stride: 24, tag: 3)
        let copied = try bigger.withUnsafeBytes {
            try assembler.take(
                $0, stride: 24, bufferWidth: 6, bufferHeight: 4, crop: nil,
                damage: [.init(x: 0, y: 0, width: 1, height: 1)])
        }
        #expect(copied == 24 && assembler.width == 6)
        #expect(throws: FrameAssembler.AssemblyError.tooSmall(needed: 96, got: 64)) {
            try small.withUnsafeBytes {
                _ = try assembler.take($0, stride: 24, bufferWidth: 6, bufferHeight: 4, crop: nil, damage: nil)
            }
        }
        #expect(throws: FrameAssembler.AssemblyError.self) {
            try small.withUnsafeBytes {
                _ = try assembler.take($0, stride: 8, bufferWidth: 4, bufferHeight: 4, crop: nil, damage: nil)
            }
        }
    }

    @Test func drawsTheCursorIntoTheFrameButNotIntoTheKeptPicture() throws {
        var assembler = FrameAssembler(format: .bgrx)
        let black = [UInt8](repeating: 0, count: 8 * 8 * 4)
        try black.withUnsafeBytes {
            _ = try assembler.take($0, stride: 32, bufferWidth: 8, bufferHeight: 8, crop: nil, damage: nil)
        }
        // A 2×2 cursor, R,G,B,A: opaque red, half-transparent green, invisible, opaque white.
        let cursor = FrameAssembler.Cursor(
            x: 6, y: 6, width: 2, height: 2, stride: 8,
            pixels: [255, 0, 0, 255, 0, 255, 0, 128, 9, 9, 9, 0, 255, 255, 255, 255], rgbaOrder: true)
        let drawn = try #require(assembler.frame(cursor: cursor, captureMicros: 0, sequence: 1))
        #expect(pixel(drawn, 6, 6) == [0, 0, 255])  // red in B,G,R order
        #expect(pixel(drawn, 7, 6) == [0, 128, 0])
        #expect(pixel(drawn, 6, 7) == [0, 0, 0])
        #expect(pixel(drawn, 7, 7) == [255, 255, 255])
        let plain = try #require(assembler.frame(cursor: nil, captureMicros: 0, sequence: 2))
        #expect(pixel(plain, 6, 6) == [0, 0, 0])
        // A cursor half off the picture is clipped, not a crash.
        let edge = FrameAssembler.Cursor(
            x: -1, y: 7, width: 2, height: 2, stride: 8, pixels: cursor.pixels, rgbaOrder: false)
        let clipped = try #require(assembler.frame(cursor: edge, captureMicros: 0, sequence: 3))
        #expect(pixel(clipped, 0, 7) == [0, 128, 0])
    }
}
