internal import CAVCodec
import Foundation
import ShareCore
import VideoSend

/// Decodes H.264 or VP8 frames with libavcodec into I420 pictures. Owns its codec context;
/// confined to the thread that decodes (the receive path's). One frame in, at most one picture
/// out: frame threading is off so a picture is never held back.
///
/// The picture size comes from the peer's bitstream, so it is capped: at most `maximumPixels`
/// (4096×2304). libavcodec refuses larger ones (`max_pixels`), a VP8 keyframe that declares one
/// is refused before it reaches libavcodec, and no larger picture is ever handed on.
public final class VideoDecoder {
    /// 4096×2304 (4K at 16:9), the most this receiver decodes.
    public static let maximumSize = (width: 4096, height: 2304)
    public static let maximumPixels = maximumSize.width * maximumSize.height

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let codec: VideoCodec
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?

    public init(codec: VideoCodec) throws(Failure) {
        self.codec = codec
        guard let decoder = avcodec_find_decoder(codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_VP8) else {
            throw Failure(description: "decode: libavcodec has no \(codec) decoder")
        }
        guard let context = avcodec_alloc_context3(decoder) else { throw Failure(description: "decode: out of memory") }
        self.context = context
        context.pointee.thread_count = 1
        context.pointee.max_pixels = Int64(Self.maximumPixels)
        let opened = avcodec_open2(context, decoder, nil)
        guard opened >= 0 else { throw Failure(description: "decode: cannot open the \(codec) decoder (\(Self.message(opened)))") }
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard packet != nil, frame != nil else { throw Failure(description: "decode: out of memory") }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    /// Decodes one frame's bytes (Annex B for H.264); returns the picture it gave, if any. A
    /// corrupt frame is an error; the decoder stays usable for the next keyframe.
    public func decode(_ bytes: [UInt8], captureMicros: Int64 = 0) throws(Failure) -> VideoFrame? {
        guard let packet, let frame, !bytes.isEmpty else { return nil }
        if codec == .vp8, let size = Self.vp8KeyframeSize(bytes), size.width * size.height > Self.maximumPixels {
            throw Self.tooLarge(width: size.width, height: size.height)
        }
        let made = av_new_packet(packet, Int32(bytes.count))
        guard made >= 0, let data = packet.pointee.data else { throw Failure(description: "decode: out of memory") }
        bytes.withUnsafeBufferPointer { source in data.update(from: source.baseAddress!, count: source.count) }
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        guard sent >= 0 else {
            // libavcodec says only EINVAL when a picture is over max_pixels; say what it may be.
            let limit = sent == -EINVAL ? "; pictures over \(Self.limitText) are refused" : ""
            throw Failure(description: "decode: \(codec) frame refused (\(Self.message(sent))\(limit))")
        }
        var picture: VideoFrame?
        var oversized: (Int, Int)?
        while avcodec_receive_frame(context, frame) >= 0 {
            defer { av_frame_unref(frame) }
            let f = frame.pointee
            guard Int(f.width) * Int(f.height) <= Self.maximumPixels else {
                oversized = (Int(f.width), Int(f.height))
                continue
            }
            picture = Self.copyI420(frame, captureMicros: captureMicros)
        }
        if let (width, height) = oversized { throw Self.tooLarge(width: width, height: height) }
        return picture
    }

    /// The size a VP8 keyframe declares (RFC 6386 §9.1: after the 3-byte frame tag, the start
    /// code 9d 01 2a, then 14-bit width and height, little-endian, under 2 scaling bits); nil for
    /// an interframe or too few bytes.
    static func vp8KeyframeSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 10, bytes[0] & 1 == 0, bytes[3] == 0x9D, bytes[4] == 0x01, bytes[5] == 0x2A else { return nil }
        return (Int(bytes[6]) | Int(bytes[7] & 0x3F) << 8, Int(bytes[8]) | Int(bytes[9] & 0x3F) << 8)
    }

    private static var limitText: String { "\(maximumSize.width)×\(maximumSize.height) (\(maximumPixels) pixels)" }

    private static func tooLarge(width: Int, height: Int) -> Failure {
        Failure(description: "decode: the peer's picture is \(width)×\(height), over the \(limitText) this receiver decodes; frame dropped")
    }

    private static func copyI420(_ frame: UnsafeMutablePointer<AVFrame>, captureMicros: Int64) -> VideoFrame? {
        let f = frame.pointee
        let format = AVPixelFormat(rawValue: f.format)
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P, f.width > 0, f.height > 0 else { return nil }
        let w = Int(f.width), h = Int(f.height), cw = (w + 1) / 2, ch = (h + 1) / 2
        func plane(_ index: Int, _ width: Int, _ height: Int) -> Plane? {
            let pointers = [f.data.0, f.data.1, f.data.2]
            let strides = [f.linesize.0, f.linesize.1, f.linesize.2]
            guard let base = pointers[index], strides[index] >= width else { return nil }
            var bytes = [UInt8](repeating: 0, count: width * height)
            bytes.withUnsafeMutableBufferPointer { out in
                for row in 0..<height {
                    (out.baseAddress! + row * width).update(from: base + row * Int(strides[index]), count: width)
                }
            }
            return Plane(bytes: bytes, stride: width)
        }
        guard let y = plane(0, w, h), let u = plane(1, cw, ch), let v = plane(2, cw, ch) else { return nil }
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
extension VideoDecoder: Sendable {}
