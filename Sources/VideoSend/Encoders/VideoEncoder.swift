import Foundation
import ShareCore

/// What every encoder offers the sending pipeline. An encoder owns its C handle and belongs to
/// one encoding thread.
public protocol VideoEncoder: AnyObject {
    var codec: VideoCodec { get }
    /// The library doing the work, for the status line: "x264", "libvpx".
    var implementation: String { get }
    var width: Int { get }
    var height: Int { get }
    var bitrate: Int { get }
    /// Encodes a frame captured at `timestamp90kHz`; nil when the encoder produced nothing for it.
    func encode(_ frame: I420Frame, timestamp90kHz: Int64) throws(EncoderError) -> EncodedFrame?
    /// The next frame out is a keyframe.
    func forceKeyframe()
    /// A new target, with frames now coming `frameRate` times a second, from the next frame on,
    /// without a keyframe or a new encoder.
    func setRate(bitrate: Int, frameRate: Int) throws(EncoderError)
}

extension X264Encoder: VideoEncoder {
    public var codec: VideoCodec { .h264 }
    public var implementation: String { "x264" }
    public var width: Int { configuration.width }
    public var height: Int { configuration.height }
    public var bitrate: Int { configuration.bitrate }
}

extension VP8Encoder: VideoEncoder {
    public var codec: VideoCodec { .vp8 }
    public var implementation: String { "libvpx" }
    public var width: Int { configuration.width }
    public var height: Int { configuration.height }
    public var bitrate: Int { configuration.bitrate }
}

/// What a video stream shows, which tunes the encoder (VP8's screen-content mode).
public enum VideoContent: String, Sendable, Hashable {
    case screen, camera
}

/// Makes encoders of one codec at whatever size the pipeline needs.
public struct VideoEncoderFactory: Sendable {
    public var codec: VideoCodec
    public var frameRate: Int
    public var threads: Int
    public var content: VideoContent
    /// H.264 through a hardware encoder (libavcodec) instead of x264.
    public var hardware: LibavH264Encoder.Backend?

    public init(
        codec: VideoCodec, frameRate: Int = 30, threads: Int = 0, content: VideoContent = .screen,
        hardware: LibavH264Encoder.Backend? = nil
    ) {
        self.codec = codec
        self.frameRate = frameRate
        self.threads = threads
        self.content = content
        self.hardware = hardware
    }

    /// The library doing the work, for the status line.
    public var implementation: String {
        switch codec {
        case .h264: hardware?.implementation ?? "x264"
        case .vp8: "libvpx"
        }
    }

    /// Threads for one encoder: the machine's cores, at most four (more only adds latency at
    /// these sizes).
    public var threadCount: Int { threads > 0 ? threads : min(4, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// libvpx's threads wait for each other by spinning: more threads than the size needs, or
    /// than spare cores, cost time rather than save it (on a busy two-core machine a 720p frame
    /// took several times longer with two). The rule libwebrtc uses: one thread up to 640×480 or
    /// on fewer than three cores, then two, three and more as the size and the cores allow.
    public static func vp8Threads(width: Int, height: Int, cores: Int) -> Int {
        let pixels = width * height
        if pixels >= 1920 * 1080 && cores > 8 { return 8 }
        if pixels > 1280 * 960 && cores >= 6 { return 3 }
        if pixels > 640 * 480 && cores >= 3 { return 2 }
        return 1
    }

    public func make(width: Int, height: Int, bitrate: Int) throws(EncoderError) -> any VideoEncoder {
        switch codec {
        case .h264:
            if let hardware {
                return try LibavH264Encoder(
                    .init(
                        backend: hardware, width: width, height: height, frameRate: frameRate,
                        bitrate: bitrate, keyframeInterval: frameRate * 10))
            }
            return try X264Encoder(
                .init(
                    width: width, height: height, frameRate: frameRate, bitrate: bitrate,
                    keyframeInterval: frameRate * 10, threads: threadCount))
        case .vp8:
            let vp8Threads =
                threads > 0
                ? threads
                : Self.vp8Threads(width: width, height: height, cores: ProcessInfo.processInfo.activeProcessorCount)
            var configuration = VP8Encoder.Configuration(
                width: width, height: height, frameRate: frameRate, bitrate: bitrate,
                keyframeInterval: frameRate * 10, threads: vp8Threads)
            configuration.screenContent = content == .screen
            return try VP8Encoder(configuration)
        }
    }
}

extension I420Frame {
    /// The I420 picture of a pipeline frame (which must already be I420; planes are copied tight).
    public init?(_ frame: VideoFrame) {
        guard frame.format == .i420, frame.planes.count == 3 else { return nil }
        let w = frame.width, h = frame.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        func tight(_ plane: Plane, _ width: Int, _ height: Int) -> [UInt8]? {
            guard plane.stride >= width, height == 0 || (height - 1) * plane.stride + width <= plane.bytes.count else {
                return nil
            }
            if plane.stride == width { return Array(plane.bytes.prefix(width * height)) }
            var out = [UInt8](); out.reserveCapacity(width * height)
            for row in 0..<height { out += plane.bytes[row * plane.stride..<row * plane.stride + width] }
            return out
        }
        guard let y = tight(frame.planes[0], w, h), let u = tight(frame.planes[1], cw, ch),
            let v = tight(frame.planes[2], cw, ch)
        else { return nil }
        self.init(width: w, height: h, y: y, u: u, v: v)
    }
}
