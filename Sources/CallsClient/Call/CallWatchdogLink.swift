import ScreenCapture
import ScreenWatchdog
import ShareCore

/// What a room call tells the screen watchdog once a second: the capture's count and, per person
/// the screen goes to, that connection's counters and what that person last reported of it.
public struct CallWatchdogFigures: Sendable, Equatable {
    public struct Person: Sendable, Equatable {
        public var id: String
        public var name: String
        /// Frames handed to this person's screen encoder, encoded, and sent (all restart at a rebuild).
        public var framesIn: Int
        public var framesEncoded: Int
        public var framesSent: Int
        public var keyframesSent: Int
        /// The pacer or congestion control holds this connection back.
        public var linkLimited: Bool
        /// Since this person's screen section started sending.
        public var sendingFor: Duration
        /// Their latest media report lists our screen as stalled (nil: no report of it yet).
        public var reportsStalled: Bool?
        /// What they say they decoded of our screen (nil: not said).
        public var reportsDecoded: Int?

        public init(
            id: String, name: String, framesIn: Int, framesEncoded: Int, framesSent: Int, keyframesSent: Int,
            linkLimited: Bool = false, sendingFor: Duration, reportsStalled: Bool?, reportsDecoded: Int? = nil
        ) {
            self.id = id
            self.name = name
            self.framesIn = framesIn
            self.framesEncoded = framesEncoded
            self.framesSent = framesSent
            self.keyframesSent = keyframesSent
            self.linkLimited = linkLimited
            self.sendingFor = sendingFor
            self.reportsStalled = reportsStalled
            self.reportsDecoded = reportsDecoded
        }
    }

    /// Frames the capture delivered (nil: no capture).
    public var captureFrames: Int?
    public var people: [Person]

    public init(captureFrames: Int?, people: [Person]) {
        self.captureFrames = captureFrames
        self.people = people
    }
}

/// What the watchdog's steps come to in a room call, one person's connection at a time.
public enum CallWatchdogCommand: Sendable, Equatable {
    case restartCapture
    case keyframe(person: String)
    /// A fresh encoder for this person's screen, `scale` of the size for `seconds` (1 and 0: full size).
    case freshEncoder(person: String, scale: Double, seconds: Double)
    /// A new screen section for this person alone (the old one inactive): a new encoder here, a
    /// new decoder there.
    case rebuild(person: String)
    /// Stop and add the screen again for everyone, from the same capture.
    case shareAgain
}

/// The call the link works on (`CallSession`; tests give their own).
public protocol CallWatchdogTarget: AnyObject, Sendable {
    func watchdogFigures() async -> CallWatchdogFigures
    func watchdogCarryOut(_ command: CallWatchdogCommand) async throws
}

/// The screen watchdog's probe and effector in a room call: maps the call's figures to the
/// ladders' inputs (a connection and a person are the same id in a mesh) and the ladders' steps
/// to what the call does. Notices, `held`, `recovered` and `giveUp` need nothing done here: the
/// watchdog's status carries them.
public final class CallWatchdogLink: WatchdogProbe, WatchdogEffector {
    /// A fresh encoder's smaller size lasts this long.
    public static let scaledSeconds = 30.0

    private let target: Locked<(any CallWatchdogTarget)?>

    public init(target: any CallWatchdogTarget) {
        self.target = Locked(target)
    }

    /// The call went away: reads give nothing and steps do nothing.
    public func detach() { target.withLock { $0 = nil } }

    public static func reading(_ figures: CallWatchdogFigures) -> WatchdogReading {
        var connections: [String: ConnectionCounters] = [:]
        var people: [String: PersonObservation] = [:]
        for person in figures.people {
            connections[person.id] = ConnectionCounters(
                framesIn: person.framesIn, framesEncoded: person.framesEncoded,
                framesSent: person.framesSent, linkLimited: person.linkLimited,
                age: person.sendingFor)
            people[person.id] = PersonObservation(
                name: person.name, stalled: person.reportsStalled ?? false,
                framesSent: person.framesSent, keyframesSent: person.keyframesSent,
                framesDecoded: person.reportsDecoded)
        }
        return WatchdogReading(
            sender: SenderCounters(captureFrames: figures.captureFrames, connections: connections),
            people: people)
    }

    /// The command a step comes to, or nil for steps that only say something.
    public static func command(for action: LadderAction) -> CallWatchdogCommand? {
        switch action {
        case .restartCapture: .restartCapture
        case .requestKeyframe(let id): .keyframe(person: id)
        case .freshEncoder(let id, let scale): .freshEncoder(person: id, scale: scale, seconds: scaledSeconds)
        case .restoreScale(let id): .freshEncoder(person: id, scale: 1, seconds: 0)
        case .newTransceiver(let id), .rebuild(let id): .rebuild(person: id)
        case .shareAgain: .shareAgain
        case .giveUp, .notice, .recovered, .held: nil
        }
    }

    public func read() async -> WatchdogReading {
        guard let call = target.withLock({ $0 }) else {
            return WatchdogReading(sender: SenderCounters(captureFrames: nil))
        }
        return Self.reading(await call.watchdogFigures())
    }

    public func perform(_ action: LadderAction) async throws {
        guard let command = Self.command(for: action), let call = target.withLock({ $0 }) else { return }
        try await call.watchdogCarryOut(command)
    }
}
