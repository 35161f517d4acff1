import Foundation
import ScreenCapture
import ShareCore
import Synchronization

/// The encoder's own thread: takes the newest frames from a `FrameQueue`, converts and scales them
/// to I420 at the size the pipeline wants (long side at most `maxLongSide`), encodes them, and hands
/// each encoded frame on with its capture time. Keyframe requests and bitrate changes arrive from
/// other threads as flags it reads before each frame; it never blocks anyone but itself.
public final class VideoEncodingThread: Sendable {
    public struct Settings: Sendable {
        public var factory: VideoEncoderFactory
        public var bitrate: Int
        public var maxLongSide: Int

        public init(factory: VideoEncoderFactory, bitrate: Int = 2_500_000, maxLongSide: Int = 1920) {
            self.factory = factory
            self.bitrate = bitrate
            self.maxLongSide = maxLongSide
        }
    }

    public struct Counters: Sendable, Equatable {
        public var framesIn = 0
        public var framesEncoded = 0
        public var keyframes = 0
        public var keyframeRequests = 0
        public var bytesEncoded = 0
        public var errors = 0
        public var width = 0
        public var height = 0
        public var lastError: String?
    }

    public typealias Output = @Sendable (EncodedFrame, _ captureMicros: Int64) -> Void

    private let queue: FrameQueue
    private let output: Output
    private let logger: Logger
    private let control: Mutex<Control>
    private let stats = Mutex(Counters())
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    public let codec: VideoCodec
    public let implementation: String

    private struct Control {
        var settings: Settings
        var keyframeWanted = false
        var rebuild = false
    }

    public init(queue: FrameQueue, settings: Settings, logger: Logger, output: @escaping Output) {
        self.queue = queue
        self.output = output
        self.logger = logger
        codec = settings.factory.codec
        implementation = settings.factory.codec == .h264 ? "x264" : "libvpx"
        control = Mutex(Control(settings: settings))
    }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "encoder-\(codec.rawValue.lowercased())"
        thread.start()
    }

    /// Stops the thread and waits for it (the queue is closed so a waiting take returns at once).
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        queue.close()
        finished.wait()
    }

    /// The next frame out is a keyframe (PLI/FIR, or the watchdog).
    public func requestKeyframe() {
        control.withLock { $0.keyframeWanted = true }
        stats.withLock { $0.keyframeRequests += 1 }
    }

    public func setBitrate(_ bitsPerSecond: Int) {
        control.withLock { c in
            guard c.settings.bitrate != bitsPerSecond else { return }
            c.settings.bitrate = bitsPerSecond
            c.rebuild = true
        }
    }

    /// A fresh encoder for the next frame (the watchdog's second rung).
    public func rebuildEncoder() { control.withLock { $0.rebuild = true } }

    public var counters: Counters { stats.withLock { $0 } }

    private func run() {
        var encoder: (any VideoEncoder)?
        var bitrate = 0
        while running.load(ordering: .acquiring) {
            guard let frame = queue.take(waitingUpTo: .milliseconds(200), now: Clocks.monotonicMicros) else { continue }
            stats.withLock { $0.framesIn += 1 }
            let (settings, keyframe, rebuild) = control.withLock { c in
                defer { c.keyframeWanted = false; c.rebuild = false }
                return (c.settings, c.keyframeWanted, c.rebuild)
            }
            do {
                let (width, height) = Self.size(for: frame, maxLongSide: settings.maxLongSide)
                var picture = try FrameConverter.toI420(frame)
                if picture.width != width || picture.height != height {
                    picture = try FrameConverter.scaleI420(picture, width: width, height: height)
                }
                guard let i420 = I420Frame(picture) else { throw EncoderError(codec: codec.rawValue, "conversion gave no I420 picture") }
                if rebuild || encoder == nil || encoder?.width != width || encoder?.height != height || bitrate != settings.bitrate {
                    encoder = try settings.factory.make(width: width, height: height, bitrate: settings.bitrate)
                    bitrate = settings.bitrate
                    logger.info("encoder ready", ["video.encoder": implementation, "video.size": "\(width)x\(height)",
                                                  "video.targetKbps": "\(settings.bitrate / 1000)"])
                }
                if keyframe { encoder?.forceKeyframe() }
                guard let encoded = try encoder?.encode(i420) else { continue }
                stats.withLock { s in
                    s.framesEncoded += 1
                    s.bytesEncoded += encoded.bytes.count
                    if encoded.isKeyframe { s.keyframes += 1 }
                    s.width = width
                    s.height = height
                }
                output(encoded, frame.captureMicros)
            } catch {
                stats.withLock { $0.errors += 1; $0.lastError = "\(error)" }
                logger.warning("encoding a frame failed: \(error)")
                encoder = nil
            }
        }
        finished.signal()
    }

    /// The frame's size fitted inside `maxLongSide`, kept even for 4:2:0.
    static func size(for frame: VideoFrame, maxLongSide: Int) -> (Int, Int) {
        let long = max(frame.width, frame.height)
        guard long > maxLongSide else { return (frame.width & ~1, frame.height & ~1) }
        let scale = Double(maxLongSide) / Double(long)
        return (Int(Double(frame.width) * scale) & ~1, Int(Double(frame.height) * scale) & ~1)
    }
}
