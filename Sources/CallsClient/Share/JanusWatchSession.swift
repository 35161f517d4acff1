import CallMedia
import Foundation
import GLibLoop
import ShareCore
import Signalling
import StatsLine
import WebRTCTransport

/// `sharectl watch --janus URL --janus-room ID`: subscribes to a publisher of an existing Janus
/// VideoRoom (the first one, or the one named), answers Janus's offer with every candidate in it,
/// and decodes what comes: its video and audio counted each second (`Figures`).
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

        public init(target: JanusTarget) { self.target = target }
    }

    /// One second of what was received.
    public struct Figures: Sendable, Equatable {
        public var t: Double = 0
        public var publisher = ""
        public var state = ""
        public var pair: String?
        public var codec: String?
        public var width = 0
        public var height = 0
        public var framesDecoded = 0
        public var keyframesDecoded = 0
        public var fps: Double = 0
        public var videoKbps = 0
        public var packetsLost = 0
        public var nacksSent = 0
        public var plisSent = 0
        public var audioFramesDecoded = 0
        public var audioLevelDbfs: Double?
        /// The simulcast layer asked of Janus (0 the smallest), and how much the path's queue holds.
        public var layer: Int?
        public var queuingDelayMs: Double?

        public init() {}

        /// The status line: `Watching Ann: 1280×720 at 30 fps, 1,204 kbit/s (H264); audio -20 dBFS`.
        public var statusLine: String {
            let video =
                framesDecoded == 0
                ? "no picture yet"
                : "\(width)×\(height) at \(Int(fps.rounded())) fps, \(videoKbps) kbit/s (\(codec ?? "?"))"
            let audio = audioFramesDecoded == 0 ? "no audio" : "audio \(Int((audioLevelDbfs ?? -127).rounded())) dBFS"
            return "Watching \(publisher): \(video); \(audio); \(framesDecoded) frames decoded, lost \(packetsLost), "
                + "NACKs \(nacksSent), PLIs \(plisSent)\(layer.map { ", layer \($0)" } ?? "")"
        }

        /// The `--stats-json` line (`#/$defs/janusWatch` of docs/stats.schema.json).
        public var statsLine: JanusWatchStatsLine {
            var line = JanusWatchStatsLine()
            line.t = (t * 1000).rounded() / 1000
            line.publisher = publisher
            line.video.framesDecoded = framesDecoded
            line.video.keyframesDecoded = keyframesDecoded
            line.video.width = width
            line.video.height = height
            line.video.fps = (fps * 10).rounded() / 10
            line.video.bitrateKbps = videoKbps
            line.video.packetsLost = packetsLost
            line.video.nacksSent = nacksSent
            line.video.plisSent = plisSent
            line.video.codec = codec
            line.video.layer = layer
            line.video.queuingDelayMs = queuingDelayMs.map { ($0 * 10).rounded() / 10 }
            line.audio.framesDecoded = audioFramesDecoded
            line.audio.levelDbfs = audioLevelDbfs.map { ($0 * 10).rounded() / 10 }
            line.connection.state = state
            line.connection.pair = pair
            return line
        }

        /// The line as JSON; a number JSON cannot hold is written as the nearest it can, and
        /// `complain` is told which.
        public func jsonLine(complain: (String) -> Void) -> String {
            let (json, clamped) = StatsLineJSON.encodeClamping(statsLine)
            if let clamped { complain(clamped.description) }
            return json
        }
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

    public init(options: Options, loop: GLibLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
    }

    /// Subscribes and connects; throws a one-line reason, with anything started taken down.
    /// Returns the publisher's name (or id).
    @discardableResult
    public func start() async throws -> String {
        let subscriber = try JanusSubscriber(target: options.target, loop: loop, logger: logger)
        self.subscriber = subscriber
        let offer = try await subscriber.subscribe(
            display: options.publisher, wait: options.waitForPublisher, substream: options.substream)
        var configuration = PeerConnection.Configuration(
            loopbackOnly: options.loopbackOnly, connectTimeout: options.connectTimeout)
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
        started = Clocks.monotonicMicros()
        previous = (0, 0, 0, 0, 0)  // the first second's rates count from the connection
        layers = options.substream == nil ? SubscriberLayerRule() : nil
        let publisher = await subscriber.publisher
        return publisher.map { $0.display ?? String($0.id) } ?? "?"
    }

    /// Why the watch cannot go on: the connection failed, or Janus ended the subscription.
    public func endReason() async -> String? {
        if let connection, case .failed(let reason) = connection.state { return reason }
        return await subscriber?.ended()
    }

    /// The figures of the moment (rates against the previous call).
    public func figures() async -> Figures {
        var figures = Figures()
        guard let connection else { return figures }
        let statistics = await connection.statistics()
        figures.t = Double(Clocks.monotonicMicros() - started) / 1_000_000
        let publisher = await subscriber?.publisher
        figures.publisher = publisher.map { $0.display ?? String($0.id) } ?? "?"
        figures.state = statistics.transport.state.description
        figures.pair = statistics.transport.selectedPair
        if let video = statistics.transceiver(.video), let received = video.received {
            figures.codec = video.codec?.rawValue
            figures.width = received.width
            figures.height = received.height
            figures.framesDecoded = received.framesDecoded
            figures.keyframesDecoded = received.keyframesDecoded
            figures.packetsLost = received.packetsLost
            figures.nacksSent = received.nacksSent
            figures.plisSent = received.plisSent
            figures.queuingDelayMs = received.queuingDelayMs
            if let previous, figures.t > previous.t {
                let elapsed = figures.t - previous.t
                figures.fps = Double(received.framesDecoded - previous.frames) / elapsed
                figures.videoKbps = Int(Double(received.bytes - previous.bytes) * 8 / elapsed / 1000)
                if var rule = layers, let mid = video.mid {
                    let second = SubscriberLayerRule.Second(
                        nowMicros: Clocks.monotonicMicros(), packets: received.packets - previous.packets,
                        lost: received.packetsLost - previous.lost,
                        framesDecoded: received.framesDecoded - previous.frames,
                        queuingDelayMs: received.queuingDelayMs)
                    if let next = rule.update(second) { await ask(layer: next, mid: mid, after: second) }
                    layers = rule
                }
            }
            previous = (figures.t, received.framesDecoded, received.bytes, received.packets, received.packetsLost)
        }
        figures.layer = layers?.layer ?? options.substream
        if let audio = statistics.transceiver(.audio)?.received {
            figures.audioFramesDecoded = audio.audioFramesDecoded
            figures.audioLevelDbfs = audio.audioLevelDbfs
        }
        return figures
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
