/// The sender-side screen watchdog's rules (DESIGN.md "Screen watchdog"), a pure state machine:
/// `tick(now:counters:)` once a second with the running counters, and it returns the steps to
/// take, each with its reason.
///
/// - A capture that reports nothing for 3 s is restarted on the same content (again every 3 s
///   while it stays silent).
/// - A connection that takes frames in but encodes or sends none for 5 s, past its first 10 s and
///   not held back by the link (frames encoded and waiting for it), climbs: keyframe → fresh encoder with the screen a third smaller
///   (for 30 s, then back to full size) → new transceiver, 3 s apart. Still stuck 5 s after the
///   new transceiver, it climbs again from the keyframe.
/// - Frames both encoded and sent within a second end the climb (`recovered`).
public struct SenderLadder: Sendable {
    public static let captureSilence: Duration = .seconds(3)
    public static let stallLimit: Duration = .seconds(5)
    public static let grace: Duration = .seconds(10)
    public static let rungSpacing: Duration = .seconds(3)
    public static let scaledDownFor: Duration = .seconds(30)
    public static let scale = 2.0 / 3.0

    /// Where a connection is on the ladder.
    public enum Rung: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case none = 0, keyframe, freshEncoder, newTransceiver
        public static func < (a: Rung, b: Rung) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .none: "none"
            case .keyframe: "keyframe"
            case .freshEncoder: "freshEncoder"
            case .newTransceiver: "newTransceiver"
            }
        }
    }

    private struct Watch: Sendable {
        var last: ConnectionCounters
        var stuckSince: ContinuousClock.Instant?
        /// `framesIn` when the stall was first seen or the last step was taken: a step needs
        /// frames to have come in since.
        var inMark = 0
        var rung = Rung.none
        var lastStepAt: ContinuousClock.Instant?
        var scaledUntil: ContinuousClock.Instant?
    }

    private var captureFrames: Int?
    private var captureChangedAt: ContinuousClock.Instant?
    private var watches: [String: Watch] = [:]

    public init() {}

    /// The highest rung any connection is on.
    public var rung: Rung { watches.values.map(\.rung).max() ?? .none }
    /// A connection's rung (`.none` for one not seen).
    public func rung(of connection: String) -> Rung { watches[connection]?.rung ?? .none }
    /// Connections whose screen is a third smaller for now.
    public var scaledDown: Set<String> { Set(watches.filter { $0.value.scaledUntil != nil }.keys) }

    public mutating func tick(now: ContinuousClock.Instant, counters: SenderCounters) -> [LadderStep] {
        var steps: [LadderStep] = []
        if let capture = counters.captureFrames { steps += watchCapture(capture, now: now) }
        for id in watches.keys where counters.connections[id] == nil { watches[id] = nil }
        for (id, current) in counters.connections.sorted(by: { $0.key < $1.key }) {
            steps += watchConnection(id, current, now: now)
        }
        return steps
    }

    private mutating func watchCapture(_ frames: Int, now: ContinuousClock.Instant) -> [LadderStep] {
        guard let previous = captureFrames, let changedAt = captureChangedAt, frames == previous else {
            captureFrames = frames
            captureChangedAt = now
            return []
        }
        let silent = now - changedAt
        guard silent >= Self.captureSilence else { return [] }
        captureChangedAt = now
        return [
            LadderStep(
                .restartCapture,
                reason: "the capture reported no frame for \(Self.seconds(silent)) (still at \(frames))")
        ]
    }

    private mutating func watchConnection(
        _ id: String, _ current: ConnectionCounters,
        now: ContinuousClock.Instant
    ) -> [LadderStep] {
        guard var watch = watches[id], current.framesIn >= watch.last.framesIn,
            current.framesEncoded >= watch.last.framesEncoded, current.framesSent >= watch.last.framesSent
        else {
            // A connection seen for the first time, or counters that started again (a new transceiver).
            let scaledUntil = watches[id]?.scaledUntil
            watches[id] = Watch(last: current, inMark: current.framesIn, scaledUntil: scaledUntil)
            return []
        }
        defer { watch.last = current; watches[id] = watch }
        var steps: [LadderStep] = []
        if let until = watch.scaledUntil, now >= until {
            watch.scaledUntil = nil
            steps.append(
                LadderStep(
                    .restoreScale(id),
                    reason: "the fresh encoder's \(Self.seconds(Self.scaledDownFor)) at two thirds of the size are over"
                ))
        }
        let frameIn = current.framesIn > watch.last.framesIn
        let encoded = current.framesEncoded > watch.last.framesEncoded
        let sent = current.framesSent > watch.last.framesSent

        // The link's exemption holds only while the encoder still encodes: an encoder that puts out
        // nothing sends nothing, the estimate then falls to its floor, and the floor must not
        // excuse the very stall that put it there (a soak's encoder stall sat at 100 kbit/s,
        // "held back by the link", for minutes).
        let heldByLink = current.linkLimited && encoded
        if current.age < Self.grace || heldByLink || (encoded && sent) {
            if watch.rung != .none {
                // Frames moving again is the news, even when the link is also slow.
                let why =
                    encoded && sent
                    ? "frames are encoded and sent again"
                    : heldByLink
                        ? "the link holds it back (not a stall)"
                        : "it is in its first \(Self.seconds(Self.grace))"
                steps.append(LadderStep(.recovered(id), reason: "\(id): \(why)"))
            }
            watch.stuckSince = nil
            watch.rung = .none
            watch.lastStepAt = nil
            return steps
        }
        guard let stuckSince = watch.stuckSince else {
            if frameIn {
                watch.stuckSince = now
                watch.inMark = watch.last.framesIn
            }
            return steps
        }
        let stuck = current.framesIn - watch.inMark
        let what = !encoded ? "encoded" : "sent"
        switch watch.rung {
        case .none:
            guard now - stuckSince >= Self.stallLimit, stuck > 0 else { return steps }
            watch.rung = .keyframe
            steps.append(
                LadderStep(
                    .requestKeyframe(id),
                    reason: "\(id) took \(stuck) frames in and \(what) none for \(Self.seconds(now - stuckSince))"))
        case .keyframe:
            guard let at = watch.lastStepAt, now - at >= Self.rungSpacing, stuck > 0 else { return steps }
            watch.rung = .freshEncoder
            watch.scaledUntil = now + Self.scaledDownFor
            steps.append(
                LadderStep(
                    .freshEncoder(id, scale: Self.scale),
                    reason:
                        "\(id) still \(what) nothing \(Self.seconds(now - at)) after the keyframe; the screen a third smaller for \(Self.seconds(Self.scaledDownFor))"
                ))
        case .freshEncoder:
            guard let at = watch.lastStepAt, now - at >= Self.rungSpacing, stuck > 0 else { return steps }
            watch.rung = .newTransceiver
            steps.append(
                LadderStep(
                    .newTransceiver(id),
                    reason: "\(id) still \(what) nothing \(Self.seconds(now - at)) after the fresh encoder"))
        case .newTransceiver:
            // The top rung: a new climb starts from the keyframe if the stall outlasts it.
            guard let at = watch.lastStepAt, now - at >= Self.stallLimit, stuck > 0 else { return steps }
            watch.rung = .keyframe
            steps.append(
                LadderStep(
                    .requestKeyframe(id),
                    reason:
                        "\(id) still \(what) nothing \(Self.seconds(now - at)) after the new transceiver; climbing again"
                ))
        }
        watch.lastStepAt = now
        watch.inMark = current.framesIn
        return steps
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds) s" : "\(seconds).\(tenths) s"
    }
}

/// What the sender-side watchdog reads once a second. Counters only ever grow, except when a
/// connection's transceiver is replaced (then they start again, and the watch starts again).
public struct SenderCounters: Sendable, Equatable {
    /// Frames the capture has delivered (`nil` while there is no capture, e.g. a camera-only call).
    public var captureFrames: Int?
    public var connections: [String: ConnectionCounters]

    public init(captureFrames: Int?, connections: [String: ConnectionCounters] = [:]) {
        self.captureFrames = captureFrames
        self.connections = connections
    }
}

public struct ConnectionCounters: Sendable, Equatable {
    /// Frames handed to this connection's video sender.
    public var framesIn: Int
    public var framesEncoded: Int
    public var framesSent: Int
    /// The pacer or rate control is holding frames back for the link's sake.
    public var linkLimited: Bool
    /// Time since the connection started sending video.
    public var age: Duration

    public init(framesIn: Int, framesEncoded: Int, framesSent: Int, linkLimited: Bool = false, age: Duration) {
        self.framesIn = framesIn
        self.framesEncoded = framesEncoded
        self.framesSent = framesSent
        self.linkLimited = linkLimited
        self.age = age
    }
}
