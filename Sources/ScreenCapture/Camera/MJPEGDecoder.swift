internal import CAVCodec
import ShareCore

/// Decodes a camera's MJPEG frames with libavcodec into I420 (4:2:2 JPEGs have every other chroma
/// row dropped). Owns its codec context; confined to the capture thread.
final class MJPEGDecoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?

    init() throws(CameraError) {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG) else { throw CameraError("camera: libavcodec has no MJPEG decoder") }
        guard let context = avcodec_alloc_context3(codec) else { throw CameraError("camera: out of memory") }
        self.context = context
        context.pointee.thread_count = 1
        guard avcodec_open2(context, codec, nil) >= 0 else { throw CameraError("camera: cannot open the MJPEG decoder") }
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard packet != nil, frame != nil else { throw CameraError("camera: out of memory") }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    /// One JPEG in, its picture out (nil for a frame the decoder could not read).
    func decode(_ bytes: UnsafeRawBufferPointer, captureMicros: Int64) throws(CameraError) -> VideoFrame? {
        guard let packet, let frame, let source = bytes.baseAddress, !bytes.isEmpty else { return nil }
        guard av_new_packet(packet, Int32(bytes.count)) >= 0, let data = packet.pointee.data else {
            throw CameraError("camera: out of memory")
        }
        data.update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        guard sent >= 0 else { return nil }
        var picture: VideoFrame?
        while avcodec_receive_frame(context, frame) >= 0 {
            defer { av_frame_unref(frame) }
            picture = Self.copyI420(frame, captureMicros: captureMicros)
        }
        return picture
    }

    private static func copyI420(_ frame: UnsafeMutablePointer<AVFrame>, captureMicros: Int64) -> VideoFrame? {
        let f = frame.pointee
        let format = AVPixelFormat(rawValue: f.format)
        let halfRows: Bool
        if format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P {
            halfRows = false
        } else if format == AV_PIX_FMT_YUV422P || format == AV_PIX_FMT_YUVJ422P {
            halfRows = true
        } else {
            return nil
        }
        guard f.width > 0, f.height > 0 else { return nil }
        let w = Int(f.width), h = Int(f.height), cw = (w + 1) / 2, ch = (h + 1) / 2
        let pointers = [f.data.0, f.data.1, f.data.2]
        let strides = [Int(f.linesize.0), Int(f.linesize.1), Int(f.linesize.2)]
        func plane(_ index: Int, _ width: Int, _ height: Int, rowStep: Int) -> Plane? {
            guard let base = pointers[index], strides[index] >= width else { return nil }
            var bytes = [UInt8](repeating: 0, count: width * height)
            bytes.withUnsafeMutableBufferPointer { out in
                for row in 0..<height {
                    (out.baseAddress! + row * width).update(from: base + row * rowStep * strides[index], count: width)
                }
            }
            return Plane(bytes: bytes, stride: width)
        }
        let step = halfRows ? 2 : 1
        guard let y = plane(0, w, h, rowStep: 1), let u = plane(1, cw, ch, rowStep: step),
              let v = plane(2, cw, ch, rowStep: step) else { return nil }
        return VideoFrame(format: .i420, width: w, height: h, planes: [y, u, v], captureMicros: captureMicros)
    }
}

@available(*, unavailable)
extension MJPEGDecoder: Sendable {}
