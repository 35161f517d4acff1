import ScreenCapture
import ShareCore
import VideoSend

/// Decodes H.264 or VP8 frames into I420 pictures through LibavcodecDecoder; confined to the
/// thread that decodes (the receive path's). One frame in, at most one picture out: frame
/// threading is off so a picture is never held back.
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
    private let decoder: LibavcodecDecoder

    public init(codec: VideoCodec) throws(Failure) {
        self.codec = codec
        do {
            decoder = try LibavcodecDecoder(codec: codec == .h264 ? .h264 : .vp8, maximumPixels: Self.maximumPixels)
        } catch {
            throw Self.failure(error, codec: codec)
        }
    }

    /// Decodes one frame's bytes (Annex B for H.264); returns the picture it gave, if any. A
    /// corrupt frame is an error; the decoder stays usable for the next keyframe.
    public func decode(_ bytes: [UInt8], captureMicros: Int64 = 0) throws(Failure) -> VideoFrame? {
        guard !bytes.isEmpty else { return nil }
        if codec == .vp8, let size = Self.vp8KeyframeSize(bytes), size.width * size.height > Self.maximumPixels {
            throw Self.tooLarge(width: size.width, height: size.height)
        }
        let decoded = bytes.withUnsafeBytes { raw in
            Result { () throws(LibavcodecDecoder.Failure) in try decoder.decode(raw, captureMicros: captureMicros) }
        }
        switch decoded {
        case .success(let picture): return picture
        case .failure(let error): throw Self.failure(error, codec: codec)
        }
    }

    /// The size a VP8 keyframe declares (RFC 6386 §9.1: after the 3-byte frame tag, the start
    /// code 9d 01 2a, then 14-bit width and height, little-endian, under 2 scaling bits); nil for
    /// an interframe or too few bytes.
    static func vp8KeyframeSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 10, bytes[0] & 1 == 0, bytes[3] == 0x9D, bytes[4] == 0x01, bytes[5] == 0x2A else {
            return nil
        }
        return (Int(bytes[6]) | Int(bytes[7] & 0x3F) << 8, Int(bytes[8]) | Int(bytes[9] & 0x3F) << 8)
    }

    private static var limitText: String { "\(maximumSize.width)×\(maximumSize.height) (\(maximumPixels) pixels)" }

    private static func tooLarge(width: Int, height: Int) -> Failure {
        Failure(
            description:
                "decode: the peer's picture is \(width)×\(height), over the \(limitText) this receiver decodes; frame dropped"
        )
    }

    private static func failure(_ error: LibavcodecDecoder.Failure, codec: VideoCodec) -> Failure {
        switch error {
        case .noDecoder:
            Failure(description: "decode: libavcodec has no \(codec) decoder")
        case .outOfMemory:
            Failure(description: "decode: out of memory")
        case .cannotOpen(let why):
            Failure(description: "decode: cannot open the \(codec) decoder (\(why))")
        case .refused(let why, let invalidArgument):
            // libavcodec says only EINVAL when a picture is over max_pixels; say what it may be.
            Failure(
                description:
                    "decode: \(codec) frame refused (\(why)\(invalidArgument ? "; pictures over \(limitText) are refused" : ""))"
            )
        case .oversized(let width, let height):
            tooLarge(width: width, height: height)
        }
    }
}

@available(*, unavailable)
extension VideoDecoder: Sendable {}
