import CallMedia
import Foundation
import GLibLoop
import ShareCore
import Signalling
import StatsLine
import WebRTCTransport

/// `sharectl watch --janus URL --janus-room ID`: subscribes to a publisher of an existing Janus
/// VideoRoom (the first one, or the one named), answers Janus's offer with every candidate in it,
/// and decodes what comes: its video and audio counted each second (`figures()`, a
/// `JanusWatchStatsLine`). A subscription whose frames stop decoding while they arrive is started
/// afresh (`SubscriptionRecoveryRule`: a new handle, connection and decoder); the counts go on
/// across subscriptions.
///
/// In a room of `sharectl serve --sfu janus` (`Options.room`) whose sharer announced the feed
/// watched, the sharer's watchdog leads instead, as in a mesh: the watch reports what it decodes
/// of that screen once a second (stalled after 4 s without a new frame), subscribes afresh when
/// the sharer asks (its rebuild), and follows the screen to its new feed when the sharer
/// publishes it anew (its share again).
///
/// An actor for its control state; packets and decoding run on the peer connection's threads.
public actor JanusWatchSession {
    public struct Options: Sendable {
        public var target: JanusTarget
        /// Watch the publisher with this display name (nil: the first there).
        public var publisher: String?
        /// Of a simulcast publisher's layers, this one (0 the smallest, 2 the largest). Nil: the
        /// largest at first, then the layer the receive figures carry (`SubscriberLayerRule`).
        public var substream: Int?
        /// How long to wait for a publisher to appear.
        public var waitForPublisher: Duration = .seconds(30)
        public var loopbackOnly = false
        /// Interfaces or addresses to offer host candidates on besides 127.0.0.1.
        public var iceInterfaces: [String] = []
        public var connectTimeout: Duration = .seconds(20)
        /// The room's own socket, in a room of `sharectl serve --sfu janus`.
        public var room: JanusRoomPresence?

        public init(target: JanusTarget) { self.target = target }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private let options: Options
    private let loop: GLibLoop
    private let logger: Logger
    private var connection: PeerConnection?
    private var subscriber: JanusSubscriber?
    private var started: Int64 = 0
    private var previous: (t: Double, frames: Int, bytes: Int, packets: Int, lost: Int)?
    /// Which layer to ask for, unless `Options.substream` fixed one.
    private var layers: SubscriberLayerRule?
    /// When to start the subscription afresh.
    private var recovery = SubscriptionRecoveryRule(beganMicros: 0)
    /// What earlier subscriptions counted, added to the current one's figures.
    private var carried = Carried()
    /// A drill's wedged decoder (`fault decoder-wedge`): sticky ones wedge each new decoder too.
    private var wedge: (on: Bool, sticky: Bool) = (false, false)
    /// Why a restart of the subscription failed (the watch then ends).
    private var restartFailure: String?
    /// Subscriptions started afresh, for whatever reason.
    private var restartCount = 0
    /// The feed watched, and who in the room announced it (its sharer leads the repair).
    private var feed: Int?
    private var sharer: String?
    /// The view's movement, for the stall in our reports.
    private var view = ViewTracker()

    struct Carried {
        var frames = 0, keyframes = 0, bytes = 0, packets = 0, lost = 0, nacks = 0, plis = 0, audioFrames = 0
        var assembled = 0, keyframesAssembled = 0, decodeErrors = 0, recovered = 0, givenUp = 0, skipped = 0

        /// Each count and the subscription's video count it adds up.
        private static var fields: [(WritableKeyPath<Carried, Int>, KeyPath<PeerConnectionStatistics.Received, Int>)] {
            [
                (\.frames, \.framesDecoded), (\.keyframes, \.keyframesDecoded), (\.bytes, \.bytes),
                (\.packets, \.packets), (\.lost, \.packetsLost), (\.nacks, \.nacksSent), (\.plis, \.plisSent),
                (\.assembled, \.framesAssembled), (\.keyframesAssembled, \.keyframesAssembled),
                (\.decodeErrors, \.decodeErrors), (\.recovered, \.packetsRecovered), (\.givenUp, \.packetsGivenUp),
                (\.skipped, \.framesSkippedForKeyframe)
            ]
        }

        /// These counts and a subscription's video counts together.
        func plus(_ received: PeerConnectionStatistics.Received) -> Carried {
            var sum = self
            for (count, counted) in Self.fields { sum[keyPath: count] += received[keyPath: counted] }
            return sum
        }
    }

    public init(options: Options, loop: GLibLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
    }

    /// Subscribes and connects; throws a one-line reason, with anything started taken down.
    /// Returns the publisher's name (or id).
    @discardableResult
    public func start() async throws -> String {
        let publisher = try await subscribe(feed: await announcedScreen())
        started = Clocks.monotonicMicros()
        previous = (0, 0, 0, 0, 0)  // the first second's rates count from the connection
        layers = options.substream == nil ? SubscriberLayerRule() : nil
        recovery = SubscriptionRecoveryRule(beganMicros: started)
        return publisher
    }

    /// In a room, with no publisher named: the first screen someone announced (a browser
    /// publishes its camera and its screen as two feeds; a watch is for the screen), waiting for
    /// one as long as for a publisher. Nil: none was (the first publisher is watched), or not in
    /// a room.
    private func announcedScreen() async -> Int? {
        guard let room = options.room, options.publisher == nil else { return nil }
        let deadline = ContinuousClock.now + options.waitForPublisher
        while ContinuousClock.now < deadline {
            if let feed = await room.others.lazy.compactMap(\.feed).first { return feed }
            try? await Task.sleep(for: .milliseconds(250))
        }
        logger.notice("watch: no one in the room announced a screen; watching the first publisher")
        return nil
    }

    /// A subscription: a handle, its offer answered, the connection up.
    private func subscribe(feed wanted: Int? = nil) async throws -> String {
        let subscriber = try JanusSubscriber(target: options.target, loop: loop, logger: logger)
        self.subscriber = subscriber
        let offer = try await subscriber.subscribe(
            display: wanted == nil ? options.publisher : nil, feed: wanted, wait: options.waitForPublisher,
            substream: options.substream)
        var configuration = PeerConnection.Configuration(
            loopbackOnly: options.loopbackOnly, capabilities: .receiving, connectTimeout: options.connectTimeout)
        configuration.iceOptions = []  // the answer carries every candidate
        configuration.ice.allowedInterfaces = options.iceInterfaces
        let connection: PeerConnection
        do {
            connection = try PeerConnection(loop: loop, configuration: configuration, logger: logger)
        } catch {
            await subscriber.stop()
            throw error
        }
        self.connection = connection
        do {
            do {
                try await connection.setRemoteDescription(offer, type: .offer)
            } catch .notSDP(let reason) {
                throw Failure(description: "Janus: its offer is not valid SDP: \(reason)")
            } catch {
                throw Failure(description: "Janus: its offer: \(error)")
            }
            let answer = try await connection.createAnswer()
            try await subscriber.start(answer: answer)
            try await connection.waitUntilConnected()
        } catch {
            await stop()
            throw error
        }
        let publisher = await subscriber.publisher
        feed = publisher?.id
        if let feed, let room = options.room { sharer = await room.sharer(ofFeed: feed)?.id }
        return publisher.map { $0.display ?? String($0.id) } ?? "?"
    }

    /// The subscription's restarts so far.
    public var restarts: Int { restartCount }

    /// Starts the subscription afresh (to `newFeed`, when the sharer published anew), its counts
    /// carried over; a failure ends the watch. In a room it is the same feed otherwise (the first
    /// publisher there may be someone's camera); outside one, the publisher chosen as at start.
    private func restart(feed newFeed: Int? = nil) async {
        restartCount += 1
        let oldFeed = feed
        if let connection, let received = await connection.statistics().transceiver(.video)?.received {
            carried = carried.plus(received)
            if let audio = await connection.statistics().transceiver(.audio)?.received {
                carried.audioFrames += audio.audioFramesDecoded
            }
        }
        await subscriber?.stop()
        subscriber = nil
        await connection?.close()
        connection = nil
        if wedge.on, !wedge.sticky { wedge = (false, false) }
        do {
            _ = try await subscribe(feed: newFeed ?? (options.room == nil ? nil : oldFeed))
            // A sticky wedge holds across subscriptions to the same feed; a new feed (the screen
            // shared anew) is a new decoder for a new stream.
            if wedge.sticky, feed != oldFeed { wedge = (false, false) }
            layers = options.substream == nil ? SubscriberLayerRule() : nil
            if wedge.on { await applyWedge() }
            logger.notice("watch: the subscription was started afresh (restart \(restartCount))")
        } catch {
            restartFailure = "starting the subscription afresh failed: \(error)"
        }
    }

    /// Fault drill: the decoder swallows every frame (`sticky`: each new decoder too) until cleared.
    /// Returns what was done, in words.
    public func setDecoderWedged(_ on: Bool, sticky: Bool = false) async -> String {
        wedge = (on, on && sticky)
        guard connection != nil else { return "no subscription to wedge yet" }
        await applyWedge()
        guard on else { return "Fault: cleared" }
        return "Fault: the decoder of the screen watched swallows every frame"
            + (sticky ? " (sticky: across fresh subscriptions)" : " (until the subscription starts afresh)")
    }

    private func applyWedge() async {
        guard let connection else { return }
        for transceiver in await connection.allTransceivers where transceiver.kind == .video {
            await connection.setDecoderWedged(wedge.on, on: transceiver)
        }
    }

    /// Why the watch cannot go on: the connection failed, or Janus ended the subscription (in a
    /// room, only a restart that failed ends it).
    public func endReason() async -> String? {
        if let restartFailure { return restartFailure }
        if options.room != nil { return nil }
        if let connection, case .failed(let reason) = connection.state { return reason }
        return await subscriber?.ended()
    }

    /// The figures of the moment (rates against the previous call), as the `--stats-json` line
    /// (`#/$defs/janusWatch` of docs/stats.schema.json) says them.
    public func figures() async -> JanusWatchStatsLine {
        var line = JanusWatchStatsLine()
        guard let connection else { return line }
        let statistics = await connection.statistics()
        let t = Double(Clocks.monotonicMicros() - started) / 1_000_000
        line.t = (t * 1000).rounded() / 1000
        let publisher = await subscriber?.publisher
        line.publisher = publisher.map { $0.display ?? String($0.id) } ?? "?"
        line.connection.state = statistics.transport.state.description
        line.connection.pair = statistics.transport.selectedPair
        var restartNow = false
        if let video = statistics.transceiver(.video), let received = video.received {
            // Counted across subscriptions: what the earlier ones decoded, plus this one's.
            let total = carried.plus(received)
            let frames = total.frames, bytes = total.bytes, packets = total.packets, lost = total.lost
            line.video.codec = video.codec?.rawValue
            line.video.width = received.width
            line.video.height = received.height
            line.video.framesDecoded = frames
            line.video.keyframesDecoded = total.keyframes
            line.video.packetsLost = lost
            line.video.nacksSent = total.nacks
            line.video.plisSent = total.plis
            line.video.framesAssembled = total.assembled
            line.video.keyframesAssembled = total.keyframesAssembled
            line.video.decodeErrors = total.decodeErrors
            line.video.packetsRecovered = total.recovered
            line.video.packetsGivenUp = total.givenUp
            line.video.framesSkippedForKeyframe = total.skipped
            line.video.queuingDelayMs = received.queuingDelayMs.map { ($0 * 10).rounded() / 10 }
            if let previous, t > previous.t {
                let elapsed = t - previous.t
                line.video.fps = (Double(frames - previous.frames) / elapsed * 10).rounded() / 10
                line.video.bitrateKbps = Int(Double(bytes - previous.bytes) * 8 / elapsed / 1000)
                let now = Clocks.monotonicMicros()
                if var rule = layers, let mid = video.mid {
                    let second = SubscriberLayerRule.Second(
                        nowMicros: now, packets: packets - previous.packets, lost: lost - previous.lost,
                        framesDecoded: frames - previous.frames, queuingDelayMs: received.queuingDelayMs,
                        receivedKbps: line.video.bitrateKbps)
                    if let next = rule.update(second) { await ask(layer: next, mid: mid, after: second) }
                    layers = rule
                }
                restartNow = recovery.update(
                    nowMicros: now, packets: packets - previous.packets, framesDecoded: frames - previous.frames)
                view.update(frames: frames, now: .now, elapsed: elapsed)
            }
            previous = (t, frames, bytes, packets, lost)
        }
        line.video.layer = layers?.layer ?? options.substream
        var reason: String?
        if restartNow {
            reason =
                "frames arrive and none has decoded for \(SubscriptionRecoveryRule.stallMicros / 1_000_000) s; starting the subscription afresh"
        }
        var newFeed: Int?
        if let room = options.room {
            (reason, newFeed) = await followRoom(room, frames: line.video.framesDecoded, ownReason: reason)
        }
        line.video.restarts = restartCount + (reason == nil ? 0 : 1)
        if let audio = statistics.transceiver(.audio)?.received {
            line.audio.framesDecoded = carried.audioFrames + audio.audioFramesDecoded
            line.audio.levelDbfs = audio.audioLevelDbfs.map { ($0 * 10).rounded() / 10 }
        }
        if let reason {
            logger.notice("watch: \(reason)")
            await restart(feed: newFeed)
        }
        return line
    }

    /// In a room on Janus: the report of what we decode of the sharer's screen, and whether to
    /// subscribe afresh (the reason, and the feed to subscribe to). A screen whose sharer is in the
    /// room is repaired by that sharer's watchdog, so our own rule's restart is left out.
    private func followRoom(_ room: JanusRoomPresence, frames: Int, ownReason: String?) async -> (String?, Int?) {
        if let connection, case .failed(let why) = connection.state {
            return ("the connection failed (\(why)); subscribing again", nil)
        }
        if sharer == nil, let feed { sharer = await room.sharer(ofFeed: feed)?.id }
        let asked = await room.takeRestartRequests()
        guard let sharer, let person = await room.others.first(where: { $0.id == sharer }) else {
            if let ended = await subscriber?.ended() {
                return ("Janus ended the subscription (\(ended)); subscribing again", nil)
            }
            return (ownReason, nil)
        }
        // The screen is off (share off, or between a share again's two publishes): nothing to
        // report of it, nothing to repair; its next feed is followed when announced.
        guard let announced = person.feed else {
            view.reset()
            return (nil, nil)
        }
        if announced != feed {
            view.reset()
            return ("\(person.name) shares the screen anew (feed \(announced)); subscribing to it", announced)
        }
        let stalled = view.stalled(now: .now)
        await room.report(.init(screens: [.init(from: sharer, framesDecoded: frames, screenStalled: stalled)]))
        if asked.contains(sharer) { return ("\(person.name) asked for a fresh subscription to the screen", nil) }
        if let ended = await subscriber?.ended() {
            return ("Janus ended the subscription (\(ended)); subscribing again", announced)
        }
        return (nil, nil)
    }

    /// Asks Janus for `layer`; a refusal is logged, and the rule's choice stands for the next try.
    private func ask(layer: Int, mid: String, after second: SubscriberLayerRule.Second) async {
        logger.notice(
            "asking Janus for simulcast layer \(layer)",
            [
                "video.layer": "\(layer)", "video.lost": "\(second.lost)/\(second.packets + second.lost)",
                "video.frames": "\(second.framesDecoded)",
                "video.queuingMs": second.queuingDelayMs.map { String(format: "%.0f", $0) } ?? "-"
            ])
        do {
            try await subscriber?.configure(mid: mid, substream: layer)
        } catch {
            logger.warning("Janus did not take the layer change: \(error)")
        }
    }

    /// Leaves the subscription and closes the connection.
    public func stop() async {
        await subscriber?.stop()
        subscriber = nil
        await connection?.close()
        connection = nil
    }
}

extension JanusWatchStatsLine {
    /// The status line: `Watching Ann: 1280×720 at 30 fps, 1,204 kbit/s (H264); audio -20 dBFS`.
    public var statusLine: String {
        let picture =
            video.framesDecoded == 0
            ? "no picture yet"
            : "\(video.width)×\(video.height) at \(Int(video.fps.rounded())) fps, \(video.bitrateKbps) kbit/s (\(video.codec ?? "?"))"
        let sound =
            audio.framesDecoded == 0 ? "no audio" : "audio \(Int((audio.levelDbfs ?? -127).rounded())) dBFS"
        return
            "Watching \(publisher): \(picture); \(sound); \(video.framesDecoded) frames decoded, lost \(video.packetsLost), "
            + "NACKs \(video.nacksSent), PLIs \(video.plisSent)\(video.layer.map { ", layer \($0)" } ?? "")"
    }

    /// The line as JSON; a number JSON cannot hold is written as the nearest it can, and
    /// `complain` is told which.
    public func jsonLine(complain: (String) -> Void) -> String {
        let (json, clamped) = StatsLineJSON.encodeClamping(self)
        if let clamped { complain(clamped.description) }
        return json
    }
}
