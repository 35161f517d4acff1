/// What a ladder asks its actor to do. The sender-side watchdog (`SenderLadder`) names
/// connections, the receiver-driven ladder (`ReceiverLadder`) names people; both are the ids the
/// call session gave them (a connection id and a person's id are the same string in a mesh call,
/// one connection per person).
public enum LadderAction: Hashable, Sendable {
    /// The capture reported nothing for 3 s: start it again on the same content, no picker.
    case restartCapture
    /// Send this connection (or this person's connection) a keyframe.
    case requestKeyframe(String)
    /// A new encoder for this connection with the screen scaled by `scale` (2/3: a third smaller).
    case freshEncoder(String, scale: Double)
    /// The scaled-down period of a fresh encoder is over: back to the full size.
    case restoreScale(String)
    /// A new transceiver for this connection (sender-side top rung).
    case newTransceiver(String)
    /// A new transceiver for this person alone, so a new encoder here and a new decoder there,
    /// at the same size and policy.
    case rebuild(String)
    /// Share again to everyone from the same capture, no picker.
    case shareAgain
    /// Nothing more will be tried for this person.
    case giveUp(String)
    /// Show `text` about this person to the sharer, or take the notice away (`nil`).
    case notice(String, String?)
    /// The stall is over: frames move again (sender side) or the report cleared (receiver side).
    case recovered(String)
    /// A step that was due is not taken now (no frames left since the last step, or its rate
    /// limit); the reason says which. Effectors do nothing for it; it is there to be logged.
    case held(String, step: String)

    /// A short name for logs, stats and plots: `keyframe`, `freshEncoder`, `rebuild`, …
    public var name: String {
        switch self {
        case .restartCapture: "restartCapture"
        case .requestKeyframe: "keyframe"
        case .freshEncoder: "freshEncoder"
        case .restoreScale: "restoreScale"
        case .newTransceiver: "newTransceiver"
        case .rebuild: "rebuild"
        case .shareAgain: "shareAgain"
        case .giveUp: "giveUp"
        case .notice: "notice"
        case .recovered: "recovered"
        case .held: "held"
        }
    }

    /// The connection or person the action is about, if any.
    public var subject: String? {
        switch self {
        case .restartCapture, .shareAgain: nil
        case .requestKeyframe(let id), .freshEncoder(let id, _), .restoreScale(let id), .newTransceiver(let id),
            .rebuild(let id), .giveUp(let id), .notice(let id, _), .recovered(let id), .held(let id, _):
            id
        }
    }
}

/// One step a ladder took, with the reason in plain words (it goes to the log and the stats).
public struct LadderStep: Hashable, Sendable, CustomStringConvertible {
    public var action: LadderAction
    public var reason: String

    public init(_ action: LadderAction, reason: String) {
        self.action = action
        self.reason = reason
    }

    public var description: String {
        let subject = action.subject.map { " \($0)" } ?? ""
        return "\(action.name)\(subject): \(reason)"
    }
}
