/// `a=sendrecv`, `a=sendonly`, `a=recvonly`, `a=inactive` (RFC 8866 §6.7), always from the
/// writer's point of view: an offer's `sendonly` means the offerer sends.
public enum MediaDirection: String, Hashable, Sendable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }

    /// The same stream seen from the other side: `sendonly` ↔ `recvonly`.
    public var reversed: MediaDirection { MediaDirection(sends: receives, receives: sends) }

    /// What an answerer who wants `wanted` may say to an offer of `offered` (RFC 3264 §6.1):
    /// their `sendonly` lets us at most receive, their `recvonly` at most send.
    public static func answering(_ offered: MediaDirection, wanting wanted: MediaDirection) -> MediaDirection {
        MediaDirection(sends: wanted.sends && offered.receives, receives: wanted.receives && offered.sends)
    }
}
