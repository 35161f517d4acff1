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
/// - A rebuild for one person (a new section, `dedicate`) gives that connection an encoder of its
///   own for `dedicatedMicros` (30 s), sized by its own estimate as a connection's encoder in a
///   mesh without shared layers is, so the others on its layer are not touched; then it goes
///   back to its layer. The watchdog's fresh encoder makes the encoder a person is sent fresh: a
///   layer's (everyone on it is fed by the one that stalled), or the person's own.
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
    /// The queues of connections' dedicated encoders, fed with the layers'.
    private let dedicatedQueues = Locked<[FrameQueue]>([])
    /// Each layer's settings and the policy now, for a dedicated encoder.
    private let layerSettings: [VideoEncodingThread.Settings]
    private let policy: Locked<ScreenSendPolicy>
    private let running = Locked((started: false, stopped: false))
    private let logger: Logger

    /// How long a connection keeps the encoder the watchdog made for it alone (30 s).
    package let dedicatedMicros: Int64

    /// `maxBitrate`: the full-size layer's maximum (the screen's `--bitrate`).
    package init(
        codec: VideoCodec, source: any VideoFrameSource, maxBitrate: Int, framesPerSecond: Int, maxLongSide: Int,
        policy: ScreenSendPolicy, logger: Logger, dedicatedMicros: Int64 = 30_000_000
    ) {
        self.codec = codec
        self.dedicatedMicros = dedicatedMicros
        self.source = source
        self.logger = logger
        let allocation = SimulcastAllocation.screen(rids: ["h", "m", "l"], maxBitrate: maxBitrate)
        self.allocation = allocation
        self.policy = Locked(policy)
        let taps = Locked<[SharedLayerTap]>([])
        self.taps = taps
        // The encoders, for the outputs that finish a connection's move (made below).
        let made = Locked<[VideoEncodingThread]>([])
        var queues: [FrameQueue] = []
        var encoders: [VideoEncodingThread] = []
        var layerSettings: [VideoEncodingThread.Settings] = []
        let factory = VideoEncoderFactory(codec: codec, frameRate: framesPerSecond, content: .screen)
        for (index, layer) in allocation.layers.enumerated() {
            let queue = FrameQueue()
            var settings = VideoEncodingThread.Settings(
                factory: factory, bitrate: layer.maxBitrate, maxLongSide: maxLongSide, policy: policy,
                startBitrate: layer.minBitrate, sizeDivisor: layer.divisor)
            settings.makeLayer()
            layerSettings.append(settings)
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
        self.layerSettings = layerSettings
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
        let dedicated = dedicatedQueues
        source.start { frame in
            let shared = frame.sharingConversions()
            for queue in queues { queue.push(shared) }
            for queue in dedicated.withLock({ $0 }) { queue.push(shared) }
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
        encoder(for: tap, wanted: true)?.requestKeyframe()
    }

    /// The encoder whose frames `tap` is sent (`wanted`: the one it moves to, if it does).
    package func encoder(for tap: SharedLayerTap, wanted: Bool = false) -> VideoEncodingThread? {
        guard let layer = wanted ? tap.wantedLayer : tap.layer else { return nil }
        if layer == SharedLayerTap.dedicatedLayer { return tap.dedicatedEncoder }
        return encoders.indices.contains(layer) ? encoders[layer] : nil
    }

    /// An encoder for the person behind `tap` alone (a rebuild for them): the full size's settings,
    /// its size chosen by their estimate (with `scale` of it for `seconds`), sent from its first
    /// keyframe for `dedicatedMicros`; asked again meanwhile, that encoder is made fresh once more
    /// and the time starts again.
    package func dedicate(_ tap: SharedLayerTap, scale: Double, forSeconds seconds: Double) {
        let now = Clocks.monotonicMicros()
        if let existing = tap.dedicatedEncoder {
            existing.rebuildEncoder(scale: scale, forSeconds: seconds)
            tap.extendDedicated(untilMicros: now + dedicatedMicros)
            return
        }
        guard running.withLock({ $0.started && !$0.stopped }) else { return }
        var settings = layerSettings[0]
        // One receiver's own stream, not a rung of the ladder: sized like a single stream.
        settings.maxBitsPerPixel = nil
        settings.sizesByQuantizer = true
        settings.policy = policy.withLock { $0 }
        settings.startBitrate = tap.target
        let queue = FrameQueue()
        let taps = self.taps
        let (encoders, allocation) = (self.encoders, self.allocation)
        let encoder = VideoEncodingThread(queue: queue, settings: settings, logger: logger) { frame, captureMicros in
            if tap.deliver(frame, captureMicros: captureMicros, layer: SharedLayerTap.dedicatedLayer) {
                Self.rebalance(taps, encoders: encoders, allocation: allocation, nowMicros: Clocks.monotonicMicros())
            }
        }
        encoder.rebuildEncoder(scale: scale, forSeconds: seconds)
        encoder.setBitrate(tap.target)
        tap.setDedicated(.init(encoder: encoder, queue: queue, untilMicros: now + dedicatedMicros))
        dedicatedQueues.withLock { $0.append(queue) }
        encoder.start()
        rebalance(nowMicros: now)
        logger.notice(
            "an encoder of its own for one connection for \(dedicatedMicros / 1_000_000) s (the others on its layer go on)"
        )
    }

    /// Stops sending to `tap` for good (its connection is gone): also its own encoder, if any.
    package func release(_ tap: SharedLayerTap) {
        remove(tap)
        if let dedicated = tap.takeDedicated(force: true) { Self.retire(dedicated, from: dedicatedQueues) }
    }

    /// `tap`'s receiver asked again after the last keyframe: it moves one layer down for a while
    /// (the smaller keyframe it needs is that layer's).
    package func keyframeDidNotGetThrough(for tap: SharedLayerTap) {
        tap.holdSmaller(nowMicros: Clocks.monotonicMicros())
        rebalance(nowMicros: Clocks.monotonicMicros())
        requestKeyframe(for: tap)
    }

    package func setPolicy(_ policy: ScreenSendPolicy) {
        self.policy.withLock { $0 = policy }
        for encoder in encoders { encoder.setPolicy(policy) }
        for tap in taps.withLock({ $0 }) { tap.dedicatedEncoder?.setPolicy(policy) }
    }

    /// Stops the source and the encoders; they do not start again.
    package func stop() {
        let wasStarted = running.withLock { r -> Bool in
            r.stopped = true
            return r.started
        }
        let left = taps.withLock { taps in
            defer { taps.removeAll() }
            return taps
        }
        guard wasStarted else { return }
        source.stop()
        for encoder in encoders { encoder.stop() }
        for tap in left { tap.takeDedicated(force: true)?.encoder.stop() }
    }

    private func rebalance(nowMicros: Int64) {
        Self.rebalance(taps, encoders: encoders, allocation: allocation, nowMicros: nowMicros)
        // A connection back on its layer lets its own encoder go.
        for tap in taps.withLock({ $0 }) {
            if let done = tap.takeDedicated(force: false) { Self.retire(done, from: dedicatedQueues) }
        }
    }

    /// Stops a dedicated encoder off the caller's thread (an encoder's output may be the caller;
    /// stopping waits for the encoder's thread).
    private static func retire(_ dedicated: SharedLayerTap.Dedicated, from queues: Locked<[FrameQueue]>) {
        queues.withLock { $0.removeAll { $0 === dedicated.queue } }
        DispatchQueue.global().async { dedicated.encoder.stop() }
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
                if moved, layer != SharedLayerTap.dedicatedLayer { keyframes.insert(layer) }
                tap.dedicatedEncoder?.setBitrate(tap.target)
                for used in tap.layersInUse where rates.indices.contains(used) {
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
    /// The layer number of a dedicated encoder's frames.
    package static let dedicatedLayer = -1

    /// An encoder made for this connection alone (`SharedLayerEncoders.dedicate`).
    struct Dedicated: Sendable {
        let encoder: VideoEncodingThread
        let queue: FrameQueue
        var untilMicros: Int64
    }

    private struct State {
        var choice: SharedLayerChoice
        var target: Int
        /// The layer whose frames go out now (nil: none yet).
        var current: Int?
        /// The layer to move to at its next keyframe.
        var pending: Int?
        var lastTimestamp: UInt32?
        var dedicated: Dedicated?
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
    /// The shared layers this connection needs running: its current one and the one it moves to.
    var layersInUse: [Int] {
        state.withLock { s in [s.current, s.pending].compactMap { $0 }.filter { $0 != Self.dedicatedLayer } }
    }

    func setTarget(_ bitsPerSecond: Int) { state.withLock { $0.target = bitsPerSecond } }

    var dedicatedEncoder: VideoEncodingThread? { state.withLock { $0.dedicated?.encoder } }

    /// From now on the dedicated encoder's frames, from its first keyframe.
    func setDedicated(_ dedicated: Dedicated) {
        state.withLock { s in
            s.dedicated = dedicated
            _ = Self.aim(&s, at: Self.dedicatedLayer)
        }
    }

    func extendDedicated(untilMicros: Int64) { state.withLock { $0.dedicated?.untilMicros = untilMicros } }

    /// The dedicated encoder, handed over to be stopped: once the connection is back on a layer
    /// (or at once with `force`).
    func takeDedicated(force: Bool) -> Dedicated? {
        state.withLock { s in
            guard let dedicated = s.dedicated,
                force || (s.current != Self.dedicatedLayer && s.pending != Self.dedicatedLayer)
            else { return nil }
            s.dedicated = nil
            if s.pending == Self.dedicatedLayer { s.pending = nil }
            return dedicated
        }
    }

    /// The layer for the current estimate; `moved` when a move to a new layer begins. While its
    /// dedicated encoder's time lasts, that encoder.
    func choose(nowMicros: Int64) -> (layer: Int, moved: Bool) {
        state.withLock { s in
            let wanted = s.choice.choose(targetBitrate: s.target, nowMicros: nowMicros)
            if let dedicated = s.dedicated, nowMicros < dedicated.untilMicros {
                return Self.aim(&s, at: Self.dedicatedLayer)
            }
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
