import RTPWire
import ShareCore

/// The codec's payloader behind one face: an encoded frame in, RTP payload units out
/// (RFC 6184 for H.264 with packetization-mode 1, RFC 7741 for VP8).
public struct VideoPayloader: Sendable {
    private enum Inner: Sendable {
        case h264(H264Payloader)
        case vp8(VP8Payloader)
    }

    private var inner: Inner
    public let codec: VideoCodec

    public init(codec: VideoCodec, maxPayloadSize: Int = 1200) {
        self.codec = codec
        switch codec {
        case .h264: inner = .h264(H264Payloader(maxPayloadSize: maxPayloadSize))
        case .vp8: inner = .vp8(VP8Payloader(maxPayloadSize: maxPayloadSize, firstPictureID: .random(in: 0...0x7FFF)))
        }
    }

    public mutating func payload(_ frame: EncodedFrame) throws(WireError) -> [RTPPayloadUnit] {
        switch inner {
        case .h264(var payloader):
            defer { inner = .h264(payloader) }
            return try payloader.payload(frame.bytes)
        case .vp8(var payloader):
            defer { inner = .vp8(payloader) }
            return try payloader.payload(frame.bytes)
        }
    }
}
