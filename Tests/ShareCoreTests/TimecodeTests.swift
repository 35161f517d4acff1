import ShareCore
import Testing

@Suite struct TimecodeTests {
    @Test(arguments: [(1920, 1080), (1280, 720), (640, 360), (320, 180)])
    func drawnBandReadsBack(size: (Int, Int)) {
        let (width, height) = size
        var frame = VideoFrame.blackI420(width: width, height: height)
        let code = Timecode(frameNumber: 123_456, captureMillis: 1_795_000_000_123)
        code.draw(intoLuma: &frame.planes[0].bytes, width: width, height: height, stride: frame.planes[0].stride)
        #expect(
            Timecode.read(
                fromLuma: frame.planes[0].bytes, width: width, height: height,
                stride: frame.planes[0].stride) == code)
    }

    @Test func noBandOrDamagedBandReadsNothing() {
        var frame = VideoFrame.blackI420(width: 640, height: 360)
        #expect(Timecode.read(fromLuma: frame.planes[0].bytes, width: 640, height: 360, stride: 640) == nil)
        Timecode(frameNumber: 7, captureMillis: 9).draw(
            intoLuma: &frame.planes[0].bytes, width: 640, height: 360, stride: 640)
        // Flip one payload column (column 20 covers x = 133..<140): the CRC must catch it.
        for y in 0..<Timecode.bandHeight(for: 360) { for x in 133..<140 { frame.planes[0].bytes[y * 640 + x] ^= 0xFF } }
        #expect(Timecode.read(fromLuma: frame.planes[0].bytes, width: 640, height: 360, stride: 640) == nil)
    }

    @Test func tooSmallPicturesAreRefusedNotCrashed() {
        #expect(Timecode.read(fromLuma: [], width: 0, height: 0, stride: 0) == nil)
        #expect(Timecode.read(fromLuma: [0, 1, 2], width: 200, height: 100, stride: 200) == nil)
    }
}
