internal import CAVCodec
@testable import ScreenCapture
import ShareCore
import Testing

/// What the V4L2 poll thread makes of a buffer: YUYV and NV12 copied with their strides, MJPEG
/// decoded by libavcodec.
@Suite struct CameraFrameTests {
    @Test func yuyvKeepsItsPaddedStrideAndAShortBufferIsNoFrame() {
        let format = CameraFormat(pixel: .yuyv, width: 4, height: 2, interval: FrameInterval(fps: 30))
        let bytes: [UInt8] = [
            1, 2, 3, 4, 5, 6, 7, 8, 0xEE, 0xEE,  // row 0: 4 pixels, 2 bytes of padding
            9, 10, 11, 12, 13, 14, 15, 16, 0xEE, 0xEE
        ]
        let frame = bytes.withUnsafeBytes {
            V4L2Capture.rawFrame($0, format: format, bytesPerLine: 10, captured: 7, sequence: 3)
        }
        #expect(frame?.format == .yuyv && frame?.planes[0].stride == 10 && frame?.planes[0].bytes == bytes)
        #expect(frame?.captureMicros == 7 && frame?.sequence == 3)
        let short = bytes.prefix(12).withUnsafeBytes {
            V4L2Capture.rawFrame($0, format: format, bytesPerLine: 10, captured: 0, sequence: 0)
        }
        #expect(short == nil)
    }

    @Test func nv12SplitsLumaAndChroma() throws {
        let format = CameraFormat(pixel: .nv12, width: 4, height: 2, interval: FrameInterval(fps: 30))
        let bytes: [UInt8] = [
            16, 17, 18, 19, 20, 21, 22, 23,  // Y, 2 rows of 4
            128, 129, 130, 131
        ]  // UV, 1 row of 2 pairs
        let frame = try #require(
            bytes.withUnsafeBytes {
                V4L2Capture.rawFrame($0, format: format, bytesPerLine: 4, captured: 0, sequence: 0)
            })
        #expect(frame.planes.map(\.bytes) == [[16, 17, 18, 19, 20, 21, 22, 23], [128, 129, 130, 131]])
        #expect(try FrameConverter.toI420(frame).planes[1].bytes == [128, 130])
    }

    @Test func mjpegIsDecodedToI420() throws {
        let jpeg = try #require(Self.encodeJPEG(width: 64, height: 48, luma: 180))
        #expect(jpeg.prefix(2) == [0xFF, 0xD8], "a JPEG starts with SOI")
        let decoder = try MJPEGDecoder()
        let frame = try #require(try jpeg.withUnsafeBytes { try decoder.decode($0, captureMicros: 42) })
        #expect(frame.format == .i420 && frame.width == 64 && frame.height == 48 && frame.captureMicros == 42)
        let luma = frame.planes[0].bytes
        #expect(luma.allSatisfy { abs(Int($0) - 180) <= 3 }, "the flat grey survives the round trip")
        // Garbage is no frame, and no crash.
        #expect(
            try [UInt8](repeating: 0x55, count: 100).withUnsafeBytes { try decoder.decode($0, captureMicros: 0) } == nil
        )
    }

    /// One flat grey picture as a JPEG, made with libavcodec's MJPEG encoder; 4:2:0 unless
    /// `yuv422`.
    static func encodeJPEG(width: Int, height: Int, luma: UInt8, yuv422: Bool = false) -> [UInt8]? {
        let format = yuv422 ? AV_PIX_FMT_YUVJ422P : AV_PIX_FMT_YUVJ420P
        let chromaRows = yuv422 ? height : height / 2
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else { return nil }
        var context = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&context) }
        guard let context else { return nil }
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = format
        context.pointee.time_base = AVRational(num: 1, den: 30)
        guard avcodec_open2(context, codec, nil) >= 0 else { return nil }
        var frame = av_frame_alloc()
        var packet = av_packet_alloc()
        defer { av_frame_free(&frame); av_packet_free(&packet) }
        guard let frame, let packet else { return nil }
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = format.rawValue
        guard av_frame_get_buffer(frame, 0) >= 0 else { return nil }
        let planes = [
            (frame.pointee.data.0, frame.pointee.linesize.0, height, luma),
            (frame.pointee.data.1, frame.pointee.linesize.1, chromaRows, UInt8(128)),
            (frame.pointee.data.2, frame.pointee.linesize.2, chromaRows, UInt8(128))
        ]
        for (data, stride, rows, value) in planes {
            guard let data else { return nil }
            data.update(repeating: value, count: Int(stride) * rows)
        }
        guard avcodec_send_frame(context, frame) >= 0, avcodec_receive_packet(context, packet) >= 0,
            let bytes = packet.pointee.data
        else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(packet.pointee.size)))
    }
}
