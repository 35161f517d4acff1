import Foundation
import ScreenCapture
import ShareCore
import Synchronization

/// The encoder's own thread: takes the newest frames from a `FrameQueue`, lets through as many as
/// the send policy's frame rate allows, converts and scales them to I420 at the size the policy
/// chose (`SendShaper`), encodes them, and hands each encoded frame on with its capture time.
///
/// Keyframe requests, the target bitrate (congestion control), the policy and fresh-encoder
/// requests arrive from other threads as values it reads before each frame; it never blocks anyone
/// but itself. A bitrate change reaches the running encoder without a keyframe; only a new size
/// makes a new encoder. While the source is still (no frame for a second) the last frame is
/// encoded again once a second, so a receiver that asks for a keyframe gets one.
public final class VideoEncodingThread: Sendable {
    public struct Settings: Sendable {
        public var factory: VideoEncoderFactory
        /// The most this stream may use; congestion control sets targets below it.
        public var bitrate: Int
        public var maxLongSide: Int
        public var policy: ScreenSendPolicy
        /// The target before congestion control first sets one (nil: `bitrate`). A connection
        /// starts where its estimate starts, so the first keyframe is sized to that, not to the
        /// maximum.
        public var startBitrate: Int?
        /// A keyframe at least this often whatever the frame rate (a receiver that joined late or
        /// lost the only keyframe recovers; many WHIP ingest servers want a regular GOP). Nil: none
        /// but the encoder's own (every 300 frames) and those asked for.
        public var keyframeIntervalMicros: Int64?
        /// A simulcast layer's size against the source: 1 (full), 2 (half), 4 (a quarter), before
        /// `maxLongSide` and the policy's own steps.
        public var sizeDivisor: Int
        /// The most the encoder is given for its size: bits per pixel at the frame rate sent, 10 fps
        /// at least (nil: the whole target). Simulcast layers have it, as libwebrtc bounds each layer by its
        /// resolution: a layer the machine made smaller, or a share smaller than the stream's
        /// maximum was set for, does not spend megabits on a small picture (every packet more is
        /// one more to lose and repair).
        public var maxBitsPerPixel: Double?
        /// The size is judged by what frames would cost inside the quantizer band
        /// (`SendShaper.encoded(quantizer:)`); off, by what they spent. Simulcast layers have it off:
        /// a layer's size is its rung (`sizeDivisor`), and the allocation switches layers off when
        /// the estimate cannot carry them. With it on, under 5 % loss the loss-bound estimate left
        /// the layers at coarse quantizers, the half and quarter layers stepped down a size, and the
        /// full layer stayed off for 16 s in a Janus room.
        public var sizesByQuantizer = true

        public init(
            factory: VideoEncoderFactory, bitrate: Int = 2_500_000, maxLongSide: Int = 1920,
            policy: ScreenSendPolicy = .balanced, startBitrate: Int? = nil,
            keyframeIntervalMicros: Int64? = Settings.defaultKeyframeIntervalMicros, sizeDivisor: Int = 1
        ) {
            self.sizeDivisor = max(1, sizeDivisor)
            self.factory = factory
            self.bitrate = bitrate
            self.maxLongSide = maxLongSide
            self.policy = policy
            self.startBitrate = startBitrate
            self.keyframeIntervalMicros = keyframeIntervalMicros
        }

        public static let defaultKeyframeIntervalMicros: Int64 = 10_000_000

        /// Where the target starts: `startBitrate` under the maximum.
        public var initialTarget: Int { max(10_000, min(startBitrate ?? bitrate, bitrate)) }
    }

    public struct Counters: Sendable, Equatable {
        public var framesIn = 0
        /// Frames the policy's frame rate left out.
        public var framesSkipped = 0
        /// Still frames encoded again (a second without a new one).
        public var framesRepeated = 0
        public var framesEncoded = 0
        public var keyframes = 0
        public var keyframeRequests = 0
        /// Keyframes made smaller because the receiver asked again (`requestSmallerKeyframe`).
        public var smallerKeyframes = 0
        public var bytesEncoded = 0
        public var errors = 0
        public var encodersMade = 0
        public var width = 0
        public var height = 0
        /// The frame rate the policy allows now.
        public var frameRate = 0
        public var targetBitrate = 0
        public var policy = ScreenSendPolicy.balanced
        public var limit = SendLimit.none
        /// Smoothed cost of one frame (convert, scale, encode) in microseconds.
        public var encodeMicros = 0.0
        public var lastError: String?
        /// The last whole second's output against the target, in percent (`OvershootGuard`).
        public var overshootPercent = 0
        /// The quantizer of the last delta frames, smoothed, on the codec's scale (H.264 QP 0–51,
        /// VP8 index 0–127); nil until the encoder says one.
        public var quantizer: Double?
        /// Frames dropped before encoding to bring an overshooting output back to the target.
        public var framesDroppedForRate = 0
        /// Keyframes made because the keyframe interval had passed.
        public var periodicKeyframes = 0
        /// False while switched off (a simulcast layer the estimate cannot carry): frames are
        /// taken and nothing is encoded.
        public var active = true
    }

    public typealias Output = @Sendable (EncodedFrame, _ captureMicros: Int64) -> Void

    public static let stillRepeat = StillFrameRepeat()

    private let queue: FrameQueue
    private let output: Output
    private let logger: Logger
    private let control: Locked<Control>
    private let stats = Locked(Counters())
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    public let codec: VideoCodec
    public let implementation: String

    private struct Control {
        var settings: Settings
        var target: Int
        /// What congestion control last asked for, kept so a raised cap can give it back.
        var requested: Int?
        var keyframeWanted = false
        var rebuild = false
        /// A fresh encoder at a reduced scale until this time (the watchdog's second rung).
        var reducedScale: ReducedScale?
        /// Fault injection (drills and tests): frames are taken but nothing comes out, as from a
        /// wedged encoder, until a fresh encoder is made.
        var stalled = false
        /// Switched off (`setActive`): frames are taken and dropped.
        var paused = false
    }

    public init(queue: FrameQueue, settings: Settings, logger: Logger, output: @escaping Output) {
        self.queue = queue
        self.output = output
        self.logger = logger
        codec = settings.factory.codec
        implementation = settings.factory.implementation
        control = Locked(Control(settings: settings, target: settings.initialTarget))
        stats.withLock {
            $0.policy = settings.policy; $0.targetBitrate = settings.initialTarget
        }
    }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "encoder-\(codec.rawValue.lowercased())"
        thread.start()
    }

    /// Started and not yet stopped.
    public var isRunning: Bool { running.load(ordering: .acquiring) }

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

    /// A receiver asked again after the last keyframes: they did not get through. The next
    /// keyframe comes from a fresh encoder at two thirds of the size (under half the bytes), which
    /// holds for `smallerKeyframeSeconds`; then the size the shaper chooses returns. A screen
    /// already held smaller (the watchdog's fresh encoder) keeps its own, smaller or not.
    public func requestSmallerKeyframe() {
        let now = Clocks.monotonicMicros()
        let smaller = control.withLock { c -> Bool in
            if let held = c.reducedScale, !held.expired(now: now) {
                c.keyframeWanted = true
                return false
            }
            c.rebuild = true
            c.reducedScale = ReducedScale(
                scale: Self.smallerKeyframeScale, forSeconds: Self.smallerKeyframeSeconds, now: now)
            return true
        }
        stats.withLock {
            $0.keyframeRequests += 1
            if smaller { $0.smallerKeyframes += 1 }
        }
    }

    public static let smallerKeyframeScale = 2.0 / 3
    public static let smallerKeyframeSeconds = 5.0

    /// The target from congestion control (capped at the stream's maximum). Applied to the running
    /// encoder from the next frame, with no keyframe.
    public func setBitrate(_ bitsPerSecond: Int) {
        control.withLock { c in
            c.requested = bitsPerSecond
            c.target = max(10_000, min(bitsPerSecond, c.settings.bitrate))
        }
    }

    /// The stream's maximum (and the target, if above it).
    public func setMaxBitrate(_ bitsPerSecond: Int) {
        control.withLock { c in
            c.settings.bitrate = max(10_000, bitsPerSecond)
            c.target = min(c.target, c.settings.bitrate)
        }
    }

    /// A camera beside a shared screen is capped (500 kbit/s, 360 lines: `CameraCap.besideScreen`)
    /// and given its defaults back when the share stops; from the next frame, no renegotiation.
    public func setLimits(maxBitrate: Int, maxLongSide: Int) {
        control.withLock { c in
            c.settings.bitrate = max(10_000, maxBitrate)
            c.target = max(10_000, min(c.requested ?? c.settings.bitrate, c.settings.bitrate))
            c.settings.maxLongSide = max(16, maxLongSide)
        }
    }

    public var limits: (maxBitrate: Int, maxLongSide: Int) {
        control.withLock { ($0.settings.bitrate, $0.settings.maxLongSide) }
    }

    /// Switches the encoder off (frames are taken and dropped; a simulcast layer the estimate
    /// cannot carry) or on again, from a keyframe.
    public func setActive(_ on: Bool) {
        let changed = control.withLock { c -> Bool in
            guard c.paused == on else { return false }
            c.paused = !on
            if on { c.keyframeWanted = true }
            return true
        }
        guard changed else { return }
        stats.withLock { $0.active = on }
    }

    public var isActive: Bool { control.withLock { !$0.paused } }
    /// Its size is judged by the quantizer band (`Settings.sizesByQuantizer`).
    public var sizesByQuantizer: Bool { control.withLock { $0.settings.sizesByQuantizer } }

    /// A new policy from the next frame (no renegotiation: only size, rate and bitrate change).
    public func setPolicy(_ policy: ScreenSendPolicy) {
        control.withLock { $0.settings.policy = policy }
    }

    /// A fresh encoder for the next frame (the watchdog's second rung), optionally with the screen
    /// `scale` of its size until `seconds` have passed.
    public func rebuildEncoder(scale: Double = 1, forSeconds seconds: Double = 0) {
        control.withLock { c in
            c.rebuild = true
            c.stalled = false
            c.reducedScale = ReducedScale(scale: scale, forSeconds: seconds, now: Clocks.monotonicMicros())
        }
    }

    /// Fault injection, off unless asked for: the encoder stops producing (frames still go in)
    /// until a fresh encoder is made — what the watchdog's ladder must notice and repair.
    public func injectStall() {
        control.withLock { $0.stalled = true }
        logger.notice("fault injected: the encoder stops producing", ["video.encoder": implementation])
    }

    public var counters: Counters { stats.withLock { $0 } }
    /// An injected stall is in force (until the next fresh encoder).
    public var isStalled: Bool { control.withLock { $0.stalled } }

    private func run() {
        var encoder: (any VideoEncoder)?
        var shaper = SendShaper(policy: control.withLock { $0.settings.policy })
        var credit = 1.0
        var lastAcceptedMicros: Int64?
        var last: (picture: VideoFrame, captureMicros: Int64, encodedAtMicros: Int64)?
        var overshoot = OvershootGuard()
        var lastLongSide: Int?
        var keyframeClock = control.withLock { $0.settings.keyframeIntervalMicros }.map(KeyframeClock.init)
        while running.load(ordering: .acquiring) {
            let now = Clocks.monotonicMicros()
            var frame = queue.take(waitingUpTo: .milliseconds(100), now: Clocks.monotonicMicros)
            var isRepeat = false
            if frame == nil {
                // Still: encode the last frame again once a second, stamped now.
                guard let held = last, Self.stillRepeat.due(lastEncodedMicros: held.encodedAtMicros, now: now) else {
                    continue
                }
                var again = held.picture
                again.captureMicros = now
                frame = again
                isRepeat = true
            }
            guard let frame else { continue }
            if control.withLock({ $0.paused }) {
                if !isRepeat { stats.withLock { $0.framesIn += 1 } }
                last = nil
                continue
            }
            let (settings, target, keyframe, rebuild, reduced, stalled) = control.withLock { c in
                if let r = c.reducedScale, r.expired(now: Clocks.monotonicMicros()) {
                    c.reducedScale = nil; c.rebuild = true
                }
                // A stalled encoder keeps its pending requests: they are what it fails to answer.
                guard !c.stalled else { return (c.settings, c.target, false, false, c.reducedScale, true) }
                defer { c.keyframeWanted = false; c.rebuild = false }
                return (c.settings, c.target, c.keyframeWanted, c.rebuild, c.reducedScale, false)
            }
            if stalled {
                if !isRepeat { stats.withLock { $0.framesIn += 1 } }
                continue
            }
            shaper.setPolicy(settings.policy)
            shaper.quickStart = settings.sizesByQuantizer
            if settings.maxLongSide != lastLongSide {
                if lastLongSide != nil { shaper.judgeAfresh() }
                lastLongSide = settings.maxLongSide
            }
            let sourceLong = max(frame.width, frame.height)
            let fittedLong = min(sourceLong / settings.sizeDivisor, settings.maxLongSide)
            let sourceWidth = sourceLong > fittedLong ? frame.width * fittedLong / sourceLong : frame.width
            let sourceHeight = sourceLong > fittedLong ? frame.height * fittedLong / sourceLong : frame.height
            var decision = shaper.update(
                now: ContinuousClock.now, sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                targetBitrate: target, maxFrameRate: settings.factory.frameRate)
            if let reduced {
                (decision.shape.width, decision.shape.height) = reduced.apply(
                    width: decision.shape.width,
                    height: decision.shape.height)
            }
            // What the encoder is given: the target, or less where the size needs less. (The shaper
            // judges sizes against the whole target.)
            let rate =
                settings.maxBitsPerPixel.map { bitsPerPixel in
                    // At 10 fps or more: a detail share's few frames each carry more.
                    let pixels = Double(
                        decision.shape.width * decision.shape.height * max(10, decision.shape.frameRate))
                    return min(target, max(Self.lowestEncoderRate, Int(bitsPerPixel * pixels)))
                } ?? target
            if !isRepeat {
                stats.withLock { $0.framesIn += 1 }
                // Let frames through at the policy's rate: a credit of frames that fills with time.
                if let previous = lastAcceptedMicros {
                    credit = min(
                        2,
                        credit + Double(frame.captureMicros - previous) * Double(decision.shape.frameRate) / 1_000_000)
                }
                lastAcceptedMicros = frame.captureMicros
                guard credit >= 1 || keyframe else {
                    stats.withLock { $0.framesSkipped += 1 }
                    continue
                }
                credit = max(0, credit - 1)
                guard keyframe || overshoot.allows(target: rate, now: now) else {
                    stats.withLock { $0.framesDroppedForRate += 1 }
                    continue
                }
            }
            let periodic = !keyframe && (keyframeClock?.due(now: now) ?? false)
            var began = Clocks.monotonicMicros()
            do {
                let (width, height) = (decision.shape.width, decision.shape.height)
                var picture: VideoFrame
                var converted = began
                if isRepeat, let held = last, held.picture.width == width, held.picture.height == height {
                    picture = held.picture
                } else {
                    // Shared with the other encoders this frame went to (simulcast layers, connections).
                    picture = try FrameConverter.i420(frame, width: width, height: height)
                    converted = Clocks.monotonicMicros()
                }
                guard let i420 = I420Frame(picture) else {
                    throw EncoderError(codec: codec.rawValue, "conversion gave no I420 picture")
                }
                if rebuild || encoder == nil || encoder?.width != width || encoder?.height != height {
                    encoder = try settings.factory.make(width: width, height: height, bitrate: rate)
                    // Making an encoder is not a frame's cost.
                    let made = Clocks.monotonicMicros()
                    began += made - converted
                    converted = made
                    stats.withLock { $0.encodersMade += 1 }
                    logger.info(
                        "encoder ready",
                        [
                            "video.encoder": implementation, "video.size": "\(width)x\(height)",
                            "video.targetKbps": "\(rate / 1000)", "video.policy": settings.policy.rawValue
                        ])
                }
                try encoder?.setRate(bitrate: rate, frameRate: decision.shape.frameRate)
                if keyframe || periodic { encoder?.forceKeyframe() }
                guard let encoded = try encoder?.encode(i420, timestamp90kHz: frame.captureMicros * 9 / 100) else {
                    continue
                }
                let done = Clocks.monotonicMicros()
                let cost = done - began
                overshoot.encoded(bytes: encoded.bytes.count, target: rate, now: done)
                if encoded.isKeyframe {
                    keyframeClock?.keyframe(at: done)
                    shaper.keyframeSent()
                }
                // Keyframes cost several frames' work and come rarely: they would skew the measure.
                if !encoded.isKeyframe {
                    // The frame's share of the target: the time since the one before it (frames
                    // of a screen that changes rarely come far apart, and may spend more).
                    let interval = max(
                        1_000_000 / Int64(max(1, decision.shape.frameRate)),
                        min(1_000_000, done - (last?.encodedAtMicros ?? 0)))
                    shaper.encoded(
                        bytes: encoded.bytes.count, width: width, height: height,
                        budgetBytes: Int(Int64(target) * interval / 8_000_000),
                        quantizer: settings.sizesByQuantizer ? encoded.quantizer : nil)
                    shaper.measured(
                        encodeMicros: done - converted, fixedMicros: converted - began, width: width, height: height)
                }
                let frameRate = decision.shape.frameRate
                stats.withLock { s in
                    s.framesEncoded += 1
                    if isRepeat { s.framesRepeated += 1 }
                    s.bytesEncoded += encoded.bytes.count
                    if encoded.isKeyframe { s.keyframes += 1 }
                    if encoded.isKeyframe, periodic { s.periodicKeyframes += 1 }
                    s.overshootPercent = overshoot.lastPercent
                    if !encoded.isKeyframe, let q = encoded.quantizer?.value {
                        s.quantizer = s.quantizer.map { $0 * 0.9 + Double(q) * 0.1 } ?? Double(q)
                    }
                    s.width = width
                    s.height = height
                    s.frameRate = frameRate
                    s.targetBitrate = rate
                    s.policy = settings.policy
                    s.limit = decision.limit
                    s.encodeMicros = s.encodeMicros == 0 ? Double(cost) : s.encodeMicros * 0.9 + Double(cost) * 0.1
                }
                last = (picture, frame.captureMicros, Clocks.monotonicMicros())
                output(encoded, frame.captureMicros)
            } catch {
                stats.withLock {
                    $0.errors += 1; $0.lastError = "\(error)"
                }
                logger.warning("encoding a frame failed: \(error)")
                encoder = nil
            }
        }
        finished.signal()
    }

    /// The least an encoder is given under `maxBitsPerPixel`.
    static let lowestEncoderRate = 30_000

    /// The frame's size fitted inside `maxLongSide`, kept even for 4:2:0.
    static func size(for frame: VideoFrame, maxLongSide: Int) -> (Int, Int) {
        SendShaper.fit(width: frame.width, height: frame.height, longSide: maxLongSide)
    }
}
