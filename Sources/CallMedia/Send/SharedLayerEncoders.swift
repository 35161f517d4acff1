import Foundation
import RTPWire
import ScreenCapture
import ShareCore
import VideoSend

/// A mesh's screen encoded once for every connection: three layer encoders (full, 1/2 and 1/4 of
/// the size, like a simulcast screen's) fed the same captured frames and one conversion of each,
/// and a `SharedLayerTap` per connection that packetizes the layer its own estimate carries
/// (`SharedLayerChoice`) on its own SSRC, sequence numbers and RTX history. The sender's cost then
/// grows with the layers in use, not with the people watching.
///
/// - A layer nobody is sent is switched off; a layer's rate is the least of its connections'
///   estimates, up to its maximum (`SimulcastAllocation.screen`) and its size's bits per pixel.
/// - A connection changes layer at the new layer's next keyframe, asked for when it decides to.
/// - A keyframe request (PLI/FIR, the watchdog) reaches only the layer its connection is on.
/// - NACKs are answered from each connection's own history.
///
/// Thread-safe: taps come and go from the call's actor, targets arrive from the congestion
/// controller, frames from the encoders' threads. The encoders and the source run from the first
/// tap until `stop()`.
package final class SharedLayerEncoders: Sendable {
    package let codec: VideoCodec
    /// The layers' rates, best first.
    package let allocation: SimulcastAllocation
    /// One encoder per layer, best first.
    package let encoders: [VideoEncodingThread]
    private let queues: [FrameQueue]
    private let source: any VideoFrameSource
    private let taps: Locked<[SharedLayerTap]>
    private let running = Locked((started: false, stopped: false))
    private let logger: Logger

    /// `maxBitrate`: the full-size layer's maximum (the screen's `--bitrate`).
    package init(
        codec: VideoCodec, source: any VideoFrameSource, maxBitrate: Int, framesPerSecond: Int, maxLongSide: Int,
        policy: ScreenSendPolicy, logger: Logger
    ) {
        self.codec = codec
        self.source = source
        self.logger = logger
        let allocation = SimulcastAllocation.screen(rids: ["h", "m", "l"], maxBitrate: maxBitrate)
        self.allocation = allocation
        let taps = Locked<[SharedLayerTap]>([])
        self.taps = taps
        // The encoders, for the outputs that finish a connection's move (made below).
        let made = Locked<[VideoEncodingThread]>([])
        var queues: [FrameQueue] = []
        var encoders: [VideoEncodingThread] = []
        let factory = VideoEncoderFactory(codec: codec, frameRate: framesPerSecond, content: .screen)
        for (index, layer) in allocation.layers.enumerated() {
            let queue = FrameQueue()
            var settings = VideoEncodingThread.Settings(
                factory: factory, bitrate: layer.maxBitrate, maxLongSide: maxLongSide, policy: policy,
                startBitrate: layer.minBitrate, sizeDivisor: layer.divisor)
            settings.maxBitsPerPixel = TransceiverMedia.layerBitsPerPixel
            let encoder = VideoEncodingThread(queue: queue, settings: settings, logger: logger) {
                frame, captureMicros in
                var moved = false
                for tap in taps.withLock({ $0 }) {
                    if tap.deliver(frame, captureMicros: captureMicros, layer: index) { moved = true }
                }
                // A connection left a layer: it may be sent to no one now.
                if moved {
                    Self.rebalance(
                        taps, encoders: made.withLock { $0 }, allocation: allocation,
                        nowMicros: Clocks.monotonicMicros())
                }
            }
            encoder.setActive(false)
            queues.append(queue)
            encoders.append(encoder)
        }
        self.queues = queues
        self.encoders = encoders
        made.withLock { $0 = encoders }
    }

    /// Frames captured, as the first layer's queue counted them.
    package var queueCounters: FrameQueue.Counters { queues[0].counters }

    /// Sends to `tap` from now on (starting the encoders and the source with the first one).
    package func add(_ tap: SharedLayerTap) {
        let start = running.withLock { r -> Bool? in
            guard !r.stopped else { return nil }
            defer { r.started = true }
            return !r.started
        }
        guard let start else { return }
        taps.withLock { $0.append(tap) }
        rebalance(nowMicros: Clocks.monotonicMicros())
        guard start else { return }
        for encoder in encoders { encoder.start() }
        let queues = self.queues
        source.start { frame in
            let shared = frame.sharingConversions()
            for queue in queues { queue.push(shared) }
        }
        logger.info("shared layer encoders started (\(codec.rawValue), full, half and a quarter size)")
    }

    /// Stops sending to `tap`; a layer it alone was on is switched off.
    package func remove(_ tap: SharedLayerTap) {
        taps.withLock { $0.removeAll { $0 === tap } }
        rebalance(nowMicros: Clocks.monotonicMicros())
    }

    /// The connection behind `tap` has a new estimate.
    package func setTarget(_ bitsPerSecond: Int, of tap: SharedLayerTap) {
        tap.setTarget(bitsPerSecond)
        rebalance(nowMicros: Clocks.monotonicMicros())
    }

    /// A keyframe on the layer `tap` is on (or moving to).
    package func requestKeyframe(for tap: SharedLayerTap) {
        guard let layer = tap.wantedLayer else { return }
        encoders[layer].requestKeyframe()
    }

    /// `tap`'s receiver asked again after the last keyframe: it moves one layer down for a while
    /// (the smaller keyframe it needs is that layer's).
    package func keyframeDidNotGetThrough(for tap: SharedLayerTap) {
        tap.holdSmaller(nowMicros: Clocks.monotonicMicros())
        rebalance(nowMicros: Clocks.monotonicMicros())
        requestKeyframe(for: tap)
    }

    package func setPolicy(_ policy: ScreenSendPolicy) {
        for encoder in encoders { encoder.setPolicy(policy) }
    }

    /// Stops the source and the encoders; they do not start again.
    package func stop() {
        let wasStarted = running.withLock { r -> Bool in
            r.stopped = true
            return r.started
        }
        taps.withLock { $0.removeAll() }
        guard wasStarted else { return }
        source.stop()
        for encoder in encoders { encoder.stop() }
    }

    private func rebalance(nowMicros: Int64) {
        Self.rebalance(taps, encoders: encoders, allocation: allocation, nowMicros: nowMicros)
    }

    /// Each tap's layer for its estimate; each layer's rate and whether it runs; a keyframe on each
    /// layer a tap moves to.
    private static func rebalance(
        _ taps: Locked<[SharedLayerTap]>, encoders: [VideoEncodingThread], allocation: SimulcastAllocation,
        nowMicros: Int64
    ) {
        // Under the taps' lock, so two changes at once apply in the order they were decided (the
        // encoders' setters only take their own short locks).
        taps.withLock { taps in
            var rates = [Int?](repeating: nil, count: encoders.count)
            var keyframes = Set<Int>()
            for tap in taps {
                let (layer, moved) = tap.choose(nowMicros: nowMicros)
                if moved { keyframes.insert(layer) }
                for used in tap.layersInUse where used < rates.count {
                    rates[used] = min(rates[used] ?? Int.max, tap.target)
                }
            }
            for (index, encoder) in encoders.enumerated() {
                guard let rate = rates[index] else {
                    encoder.setActive(false)
                    continue
                }
                encoder.setBitrate(min(rate, allocation.layers[index].maxBitrate))
                encoder.setActive(true)
            }
            for layer in keyframes where layer < encoders.count { encoders[layer].requestKeyframe() }
        }
    }
}

/// One connection's share of `SharedLayerEncoders`: the layer it is sent and the one it moves to
/// at that layer's next keyframe, and its own packetizer, clock and stream.
package final class SharedLayerTap: Sendable {
    private struct State {
        var choice: SharedLayerChoice
        var target: Int
        /// The layer whose frames go out now (nil: none yet).
        var current: Int?
        /// The layer to move to at its next keyframe.
        var pending: Int?
        var lastTimestamp: UInt32?
    }

    let sender: RTPStreamSender
    private let payloader: Locked<VideoPayloader>
    private let clock = RTPClock(rate: 90_000)
    private let response: KeyframeResponse
    private let logger: Logger
    private let state: Locked<State>

    init(
        sender: RTPStreamSender, codec: VideoCodec, allocation: SimulcastAllocation, startBitrate: Int,
        response: KeyframeResponse, logger: Logger
    ) {
        self.sender = sender
        self.response = response
        self.logger = logger
        payloader = Locked(VideoPayloader(codec: codec))
        state = Locked(State(choice: SharedLayerChoice(allocation: allocation), target: startBitrate))
    }

    /// The layer whose frames go out now, or the one awaited before any has.
    package var layer: Int? { state.withLock { $0.current ?? $0.pending } }
    /// The layer keyframes are wanted on: the one moved to, else the current one.
    var wantedLayer: Int? { state.withLock { $0.pending ?? $0.current } }
    var target: Int { state.withLock { $0.target } }
    /// The layers this connection needs running: its current one and the one it moves to.
    var layersInUse: [Int] { state.withLock { s in [s.current, s.pending].compactMap { $0 } } }

    func setTarget(_ bitsPerSecond: Int) { state.withLock { $0.target = bitsPerSecond } }

    /// The layer for the current estimate; `moved` when a move to a new layer begins.
    func choose(nowMicros: Int64) -> (layer: Int, moved: Bool) {
        state.withLock { s in
            let wanted = s.choice.choose(targetBitrate: s.target, nowMicros: nowMicros)
            return Self.aim(&s, at: wanted)
        }
    }

    func holdSmaller(nowMicros: Int64) {
        state.withLock { s in _ = Self.aim(&s, at: s.choice.holdSmaller(nowMicros: nowMicros)) }
    }

    private static func aim(_ s: inout State, at wanted: Int) -> (layer: Int, moved: Bool) {
        if wanted == s.current {
            s.pending = nil
            return (wanted, false)
        }
        guard wanted != s.pending else { return (wanted, false) }
        s.pending = wanted
        return (wanted, true)
    }

    /// An encoded frame of `layer`: sent when it is this connection's layer, or the keyframe of the
    /// layer it moves to (which makes it the current one). True when it left another layer.
    @discardableResult
    func deliver(_ frame: EncodedFrame, captureMicros: Int64, layer: Int) -> Bool {
        let timestamp = clock.timestamp(forMicros: captureMicros)
        var left = false
        let send = state.withLock { s -> UInt32? in
            if s.pending == layer, frame.isKeyframe {
                left = s.current != nil
                s.current = layer
                s.pending = nil
            }
            guard s.current == layer else { return nil }
            // Layers encode side by side: a new layer's keyframe may carry an earlier capture time
            // than the last frame of the old one. Media time never runs backwards on a stream.
            var stamp = timestamp
            if let last = s.lastTimestamp, Int32(bitPattern: stamp &- last) <= 0 { stamp = last &+ 1 }
            s.lastTimestamp = stamp
            return stamp
        }
        guard let send else { return false }
        do {
            let units = try payloader.withLock { try $0.payload(frame) }
            sender.send(units, timestamp: send, nowMicros: Clocks.monotonicMicros())
            if frame.isKeyframe { response.keyframeSent(nowMicros: Clocks.monotonicMicros()) }
        } catch {
            logger.warning("a frame could not be packetized: \(error)")
        }
        return left
    }
}
