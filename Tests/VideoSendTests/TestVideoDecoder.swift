internal import CAVCodec

/// A libavcodec decoder the tests use to prove a depayloaded stream really decodes.
final class TestVideoDecoder {
    enum Codec { case h264, vp8 }

    struct DecodeError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "libavcodec error \(code)" }
    }

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?

    init(_ codec: Codec) throws {
        guard let decoder = avcodec_find_decoder(codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_VP8),
            let context = avcodec_alloc_context3(decoder)
        else { throw DecodeError(code: -1) }
        self.context = context
        context.pointee.thread_count = 1  // no frame threading: a frame in, a picture out
        let opened = avcodec_open2(context, decoder, nil)
        guard opened >= 0 else { throw DecodeError(code: opened) }
        packet = av_packet_alloc()
        frame = av_frame_alloc()
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    /// Decodes one frame's bytes; returns the sizes of the pictures that came out.
    func decode(_ bytes: [UInt8]) throws -> [(width: Int, height: Int)] {
        guard let packet else { return [] }
        // av_new_packet adds the zeroed padding libavcodec's bitstream readers need.
        let made = av_new_packet(packet, Int32(bytes.count))
        guard made >= 0, let data = packet.pointee.data else { throw DecodeError(code: made) }
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { data.update(from: base, count: source.count) }
        }
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        guard sent >= 0 else { throw DecodeError(code: sent) }
        return receive()
    }

    /// The pictures still held once input has ended.
    func flush() -> [(width: Int, height: Int)] {
        _ = avcodec_send_packet(context, nil)
        return receive()
    }

    private func receive() -> [(width: Int, height: Int)] {
        var sizes: [(width: Int, height: Int)] = []
        while avcodec_receive_frame(context, frame) >= 0, let frame {
            sizes.append((Int(frame.pointee.width), Int(frame.pointee.height)))
            av_frame_unref(frame)
        }
        return sizes
    }
}
