import ScreenWatchdog
import ShareCore
import CallMedia

/// The screen watchdog's view of a one-connection share (WHIP): it reads the capture, encoder and
/// sender counters of the screen's transceiver once a second, and carries out the sender-side
/// ladder on them — restart the capture, a keyframe, a fresh encoder a third smaller for 30 s.
/// A new transceiver cannot be had inside one WHIP session (the endpoint's answer fixes the
/// sections), so that rung is refused with its reason and the watchdog says so.
final class ShareWatchdogLink: WatchdogProbe, WatchdogEffector {
    static let connectionName = "endpoint"
    /// A fresh encoder's smaller size lasts this long.
    static let scaledSeconds = 30.0

    let connection: PeerConnection
    let video: Transceiver
    let source: SupervisedSource
    let sendingSince: ContinuousClock.Instant
    let logger: Logger

    init(connection: PeerConnection, video: Transceiver, source: SupervisedSource, logger: Logger) {
        self.connection = connection
        self.video = video
        self.source = source
        self.logger = logger
        sendingSince = .now
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    func read() async -> WatchdogReading {
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
            age: .now - sendingSince)
        return WatchdogReading(
            sender: SenderCounters(
                captureFrames: source.frameCount,
                connections: [Self.connectionName: counters]))
    }

    func perform(_ action: LadderAction) async throws {
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
        case .newTransceiver, .rebuild, .shareAgain:
            throw Refused(
                description: "a WHIP session keeps the sections of its first answer; stop and share again to start anew"
            )
        case .giveUp, .notice, .recovered, .held:
            break  // said in the watchdog's status; nothing to do to the media
        }
    }
}
