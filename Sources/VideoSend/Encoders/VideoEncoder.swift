import Foundation
import ShareCore

/// The video codecs sharectl sends.
public enum VideoCodec: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case h264 = "H264"
    case vp8 = "VP8"

    public var description: String { rawValue }

    /// `--codec h264|vp8`.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "h264", "h.264", "avc": self = .h264
        case "vp8": self = .vp8
        default: return nil
        }
    }
}

/// What every encoder offers the sending pipeline. An encoder owns its C handle and belongs to
/// one encoding thread.
public protocol VideoEncoder: AnyObject {
    var codec: VideoCodec { get }
    /// The library doing the work, for the status line: "x264", "libvpx".
    var implementation: String { get }
    var width: Int { get }
    var height: Int { get }
    func encode(_ frame: I420Frame) throws(EncoderError) -> EncodedFrame?
    /// The next frame out is a keyframe.
    func forceKeyframe()
}

extension X264Encoder: VideoEncoder {
    public var codec: VideoCodec { .h264 }
    public var implementation: String { "x264" }
    public var width: Int { configuration.width }
    public var height: Int { configuration.height }
}

extension VP8Encoder: VideoEncoder {
    public var codec: VideoCodec { .vp8 }
    public var implementation: String { "libvpx" }
    public var width: Int { configuration.width }
    public var height: Int { configuration.height }
}

/// Makes encoders of one codec at whatever size the pipeline needs.
public struct VideoEncoderFactory: Sendable {
    public var codec: VideoCodec
    public var frameRate: Int
    public var threads: Int

    public init(codec: VideoCodec, frameRate: Int = 30, threads: Int = 0) {
        self.codec = codec
        self.frameRate = frameRate
        self.threads = threads
    }

    public func make(width: Int, height: Int, bitrate: Int) throws(EncoderError) -> any VideoEncoder {
        switch codec {
        case .h264:
            return try X264Encoder(.init(width: width, height: height, frameRate: frameRate, bitrate: bitrate,
                                         keyframeInterval: frameRate * 10, threads: threads))
        case .vp8:
            // libvpx wants an explicit thread count: the machine's cores, at most four.
            let vpxThreads = threads > 0 ? threads : min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))
            return try VP8Encoder(.init(width: width, height: height, frameRate: frameRate, bitrate: bitrate,
                                        keyframeInterval: frameRate * 10, threads: vpxThreads))
        }
    }
}

extension I420Frame {
    /// The I420 picture of a pipeline frame (which must already be I420; planes are copied tight).
    public init?(_ frame: VideoFrame) {
        guard frame.format == .i420, frame.planes.count == 3 else { return nil }
        let w = frame.width, h = frame.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        func tight(_ plane: Plane, _ width: Int, _ height: Int) -> [UInt8]? {
            guard plane.stride >= width, height == 0 || (height - 1) * plane.stride + width <= plane.bytes.count else { return nil }
            if plane.stride == width { return Array(plane.bytes.prefix(width * height)) }
            var out = [UInt8](); out.reserveCapacity(width * height)
            for row in 0..<height { out += plane.bytes[row * plane.stride..<row * plane.stride + width] }
            return out
        }
        guard let y = tight(frame.planes[0], w, h), let u = tight(frame.planes[1], cw, ch),
              let v = tight(frame.planes[2], cw, ch) else { return nil }
        self.init(width: w, height: h, y: y, u: u, v: v)
    }
}
