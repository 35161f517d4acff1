import ShareCore

/// Decodes a camera's MJPEG frames into I420 (4:2:2 JPEGs have every other chroma row dropped),
/// through LibavcodecDecoder. Confined to the capture thread.
final class MJPEGDecoder {
    private let decoder: LibavcodecDecoder

    init() throws(CameraError) {
        do {
            decoder = try LibavcodecDecoder(codec: .mjpeg, acceptsYUV422: true)
        } catch {
            switch error {
            case .noDecoder: throw CameraError("camera: libavcodec has no MJPEG decoder")
            case .cannotOpen: throw CameraError("camera: cannot open the MJPEG decoder")
            case .outOfMemory, .refused, .oversized: throw CameraError("camera: out of memory")
            }
        }
    }

    /// One JPEG in, its picture out (nil for a frame the decoder could not read).
    func decode(_ bytes: UnsafeRawBufferPointer, captureMicros: Int64) throws(CameraError) -> VideoFrame? {
        do {
            return try decoder.decode(bytes, captureMicros: captureMicros)
        } catch {
            switch error {
            case .outOfMemory: throw CameraError("camera: out of memory")
            case .refused, .oversized, .noDecoder, .cannotOpen: return nil
            }
        }
    }
}

@available(*, unavailable)
extension MJPEGDecoder: Sendable {}
