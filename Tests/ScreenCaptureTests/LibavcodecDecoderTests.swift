import ScreenCapture
import ShareCore
import Testing

/// The one libavcodec decode loop, shared by the MJPEG cameras and the call's video receive path.
@Suite struct LibavcodecDecoderTests {
    @Test func a422PictureBecomesI420OnlyWhenAsked() throws {
        let jpeg = try #require(CameraFrameTests.encodeJPEG(width: 64, height: 48, luma: 90, yuv422: true))
        let taking = try LibavcodecDecoder(codec: .mjpeg, acceptsYUV422: true)
        let frame = try #require(try jpeg.withUnsafeBytes { try taking.decode($0, captureMicros: 5) })
        #expect(frame.format == .i420 && frame.width == 64 && frame.height == 48 && frame.captureMicros == 5)
        #expect(frame.planes.map(\.stride) == [64, 32, 32])
        #expect(frame.planes.map(\.bytes.count) == [64 * 48, 32 * 24, 32 * 24], "every other chroma row")
        #expect(frame.planes[1].bytes.allSatisfy { abs(Int($0) - 128) <= 3 })

        let refusing = try LibavcodecDecoder(codec: .mjpeg)
        #expect(try jpeg.withUnsafeBytes { try refusing.decode($0, captureMicros: 0) } == nil)
    }

    @Test func nothingInIsNothingOut() throws {
        let decoder = try LibavcodecDecoder(codec: .h264)
        #expect(try [UInt8]().withUnsafeBytes { try decoder.decode($0, captureMicros: 0) } == nil)
    }
}
