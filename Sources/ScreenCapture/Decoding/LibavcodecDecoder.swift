internal import CAVCodec
import Foundation
import ShareCore

/// One libavcodec decoder: its send-packet / receive-frames loop, and each picture copied out as
/// I420. The call's video receive path (H.264, VP8) and the MJPEG cameras decode through it. Owns
/// its codec context; confined to the thread that decodes. Frame threading is off, so one packet
/// in gives its picture at once, never held back.
package final class LibavcodecDecoder {
    package enum Codec: Sendable { case h264, vp8, mjpeg }

    /// What went wrong, for the owner to put in its own words.
    package enum Failure: Error, Sendable, Equatable {
        /// This libavcodec has no decoder for the codec.
        case noDecoder
        case outOfMemory
        /// avcodec_open2 refused; av_strerror's words.
        case cannotOpen(String)
        /// avcodec_send_packet refused the packet; av_strerror's words, and whether it said EINVAL
        /// (what libavcodec also says of a picture over `max_pixels`).
        case refused(String, invalidArgument: Bool)
        /// A picture larger than `maximumPixels` came out; it was dropped.
        case oversized(width: Int, height: Int)
    }

    private let maximumPixels: Int?
    private let acceptsYUV422: Bool
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?

    /// `maximumPixels` caps the picture size (libavcodec's `max_pixels`, and no larger picture is
    /// handed on); nil leaves libavcodec's own limit. With `acceptsYUV422`, 4:2:2 pictures become
    /// I420 with every other chroma row dropped; without, they give no picture.
    package init(codec: Codec, maximumPixels: Int? = nil, acceptsYUV422: Bool = false) throws(Failure) {
        self.maximumPixels = maximumPixels
        self.acceptsYUV422 = acceptsYUV422
        let id =
            switch codec {
            case .h264: AV_CODEC_ID_H264
            case .vp8: AV_CODEC_ID_VP8
            case .mjpeg: AV_CODEC_ID_MJPEG
            }
        guard let decoder = avcodec_find_decoder(id) else { throw .noDecoder }
        guard let context = avcodec_alloc_context3(decoder) else { throw .outOfMemory }
        self.context = context
        context.pointee.thread_count = 1
        if let maximumPixels { context.pointee.max_pixels = Int64(maximumPixels) }
        let opened = avcodec_open2(context, decoder, nil)
        guard opened >= 0 else { throw .cannotOpen(Self.message(opened)) }
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard packet != nil, frame != nil else { throw .outOfMemory }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    /// Sends `bytes` as one packet, then receives pictures until libavcodec has no more for now
    /// (EAGAIN) or at all; returns the last as I420, nil when none came or its layout is not one
    /// this copies (or `bytes` is empty). Pictures over `maximumPixels` are dropped and, once every
    /// picture is received, reported as `.oversized`.
    package func decode(_ bytes: UnsafeRawBufferPointer, captureMicros: Int64) throws(Failure) -> VideoFrame? {
        guard let packet, let frame, let source = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let made = av_new_packet(packet, Int32(bytes.count))  // with the zeroed padding decoders need
        guard made >= 0, let data = packet.pointee.data else { throw .outOfMemory }
        UnsafeMutableRawPointer(data).copyMemory(from: source, byteCount: bytes.count)
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        guard sent >= 0 else { throw .refused(Self.message(sent), invalidArgument: sent == -EINVAL) }
        var picture: VideoFrame?
        var oversized: (width: Int, height: Int)?
        while avcodec_receive_frame(context, frame) >= 0 {
            defer { av_frame_unref(frame) }
            let f = frame.pointee
            if let maximumPixels, Int(f.width) * Int(f.height) > maximumPixels {
                oversized = (Int(f.width), Int(f.height))
                continue
            }
            picture = copyI420(frame, captureMicros: captureMicros)
        }
        if let oversized { throw .oversized(width: oversized.width, height: oversized.height) }
        return picture
    }

    private func copyI420(_ frame: UnsafeMutablePointer<AVFrame>, captureMicros: Int64) -> VideoFrame? {
        let f = frame.pointee
        let format = AVPixelFormat(rawValue: f.format)
        let chromaRowStep: Int
        if format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P {
            chromaRowStep = 1
        } else if acceptsYUV422, format == AV_PIX_FMT_YUV422P || format == AV_PIX_FMT_YUVJ422P {
            chromaRowStep = 2
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
        guard let y = plane(0, w, h, rowStep: 1), let u = plane(1, cw, ch, rowStep: chromaRowStep),
            let v = plane(2, cw, ch, rowStep: chromaRowStep)
        else { return nil }
        return VideoFrame(format: .i420, width: w, height: h, planes: [y, u, v], captureMicros: captureMicros)
    }

    private static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

@available(*, unavailable)
extension LibavcodecDecoder: Sendable {}
