import ScreenWatchdog
import ShareCore
import CallMedia
import RoomProtocol

/// The screen watchdog's view of a one-connection share (WHIP, or Janus): it reads the capture,
/// encoder and sender counters of the screen's transceiver once a second, and carries out the
/// sender-side ladder on them — restart the capture, a keyframe, a fresh encoder a third smaller
/// for 30 s. A new transceiver cannot be had inside one WHIP session (the endpoint's answer fixes
/// the sections), so that rung is refused with its reason and the watchdog says so.
///
/// In a room on Janus (`room`) the viewers' media reports come in through the room's socket, and
/// the receiver-driven ladder runs on them too: its keyframe and fresh encoder act on the one
/// publisher every viewer is fed from, its rebuild asks that viewer to subscribe afresh (a new
/// subscription: a new connection from Janus and a new decoder), and its share again publishes
/// the screen anew from the same capture (`shareAgain`).
final class ShareWatchdogLink: WatchdogProbe, WatchdogEffector {
    static let connectionName = "endpoint"
    /// A fresh encoder's smaller size lasts this long.
    static let scaledSeconds = 30.0

    /// The connection and its screen section; a share again replaces them.
    private let current: Locked<(connection: PeerConnection, video: Transceiver, since: ContinuousClock.Instant)>
    /// The screen is off for now (share off in a room on Janus): nothing to watch.
    private let paused = Locked(false)
    let source: SupervisedSource
    let room: JanusRoomPresence?
    let logger: Logger
    /// Publishes the screen anew (a room on Janus).
    private let shareAgain = Locked<(@Sendable () async throws -> Void)?>(nil)

    init(
        connection: PeerConnection, video: Transceiver, source: SupervisedSource, room: JanusRoomPresence? = nil,
        logger: Logger
    ) {
        current = Locked((connection, video, .now))
        self.source = source
        self.room = room
        self.logger = logger
    }

    func setShareAgain(_ body: @escaping @Sendable () async throws -> Void) {
        shareAgain.withLock { $0 = body }
    }

    /// The connection and section a share again (or share on) made.
    func use(connection: PeerConnection, video: Transceiver) {
        current.withLock { $0 = (connection, video, .now) }
        paused.withLock { $0 = false }
    }

    /// Share off: the watchdog reads nothing until `use` gives it a publish again.
    func pause() {
        paused.withLock { $0 = true }
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    func read() async -> WatchdogReading {
        if paused.withLock({ $0 }) { return WatchdogReading(sender: SenderCounters(captureFrames: nil)) }
        let (connection, video, since) = current.withLock { $0 }
        let figures = await connection.statistics()
        let sent = figures.transceiver(.video)?.sent
        let framesIn = video.media?.encoder?.counters.framesIn ?? 0
        // Held back by the link: the pacer's queue is long, or congestion control is at its floor.
        let congestion = figures.congestion
        let linkLimited =
            (congestion?.pacedQueueMillis ?? 0) > 250 || (congestion.map { $0.targetBitrate <= 150_000 } ?? false)
        let counters = ConnectionCounters(
            framesIn: framesIn, framesEncoded: sent?.framesEncoded ?? 0,
            framesSent: sent?.framesSent ?? 0, linkLimited: linkLimited,
            age: .now - since)
        var people: [String: PersonObservation] = [:]
        if let room, let me = await room.myID {
            // Whoever reports our screen: everyone is fed from the one publisher.
            for person in await room.others {
                guard let theirs = person.report?.screens.first(where: { $0.from == me }) else { continue }
                people[person.id] = PersonObservation(
                    name: person.name, stalled: theirs.screenStalled, framesSent: sent?.framesSent ?? 0,
                    keyframesSent: sent?.keyframesEncoded ?? 0, framesDecoded: theirs.framesDecoded)
            }
        }
        return WatchdogReading(
            sender: SenderCounters(
                captureFrames: source.frameCount,
                connections: [Self.connectionName: counters]),
            people: people)
    }

    func perform(_ action: LadderAction) async throws {
        let (connection, video, _) = current.withLock { $0 }
        let again = shareAgain.withLock { $0 }
        switch action {
        case .restartCapture:
            source.restart()
        case .requestKeyframe:
            await connection.requestKeyframe(on: video)
        case .freshEncoder(_, let scale):
            for encoder in video.media?.encoders ?? [] {
                encoder.rebuildEncoder(scale: scale, forSeconds: Self.scaledSeconds)
            }
        case .restoreScale:
            for encoder in video.media?.encoders ?? [] { encoder.rebuildEncoder() }
        case .rebuild(let id) where room != nil && id != Self.connectionName,
            .newTransceiver(let id) where room != nil && id != Self.connectionName:
            await room?.requestRestart(of: id)
        case .shareAgain where again != nil:
            try await again?()
        case .newTransceiver, .rebuild, .shareAgain:
            throw Refused(
                description: "a WHIP session keeps the sections of its first answer; stop and share again to start anew"
            )
        case .giveUp, .notice, .recovered, .held:
            break  // said in the watchdog's status; nothing to do to the media
        }
    }
}
