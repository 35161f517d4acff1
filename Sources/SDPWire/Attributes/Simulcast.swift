/// `a=rid:<id> <send|recv> [<restrictions>]` (RFC 8851 §4): one RTP stream of a simulcast
/// section, named by the RID it carries in the `sdes:rtp-stream-id` header extension.
public struct RIDDescription: Hashable, Sendable {
    public enum Direction: String, Hashable, Sendable { case send, recv }

    /// 1–16 alphanumerics, `-` or `_` (RFC 8851 §10, as the one-byte header extension carries it).
    public var id: String
    public var direction: Direction
    /// What follows the direction (`pt=…;max-width=…`), as written.
    public var restrictions: String?

    public init(id: String, direction: Direction, restrictions: String? = nil) {
        self.id = id
        self.direction = direction
        self.restrictions = restrictions
    }

    public init(sdpValue value: String) throws(SDPError) {
        let parts = value.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2 else { throw SDPError(reason: "a=rid needs an id and a direction") }
        guard Self.isValidID(parts[0]) else {
            throw SDPError(reason: "a=rid id '\(parts[0].prefix(40))' is not 1–16 letters, digits, - or _")
        }
        guard let direction = Direction(rawValue: String(parts[1])) else {
            throw SDPError(reason: "a=rid direction '\(parts[1].prefix(20))' is neither send nor recv")
        }
        id = String(parts[0])
        self.direction = direction
        restrictions = parts.count > 2 ? String(parts[2]) : nil
    }

    public var sdpValue: String { [id, direction.rawValue, restrictions].compactMap { $0 }.joined(separator: " ") }

    static func isValidID<S: StringProtocol>(_ id: S) -> Bool {
        (1...16).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x5F
            }
    }
}

/// `a=simulcast:<send|recv> <streams> [<send|recv> <streams>]` (RFC 8853 §5.1): the RIDs a section
/// sends or receives as simulcast, best first. Each `;`-separated entry is one stream; of `,`
/// alternatives only the first is kept (sharectl sends one format per layer). A `~` marks a stream
/// paused at the start.
public struct SimulcastDescription: Hashable, Sendable {
    public struct Stream: Hashable, Sendable {
        public var rid: String
        public var paused: Bool

        public init(rid: String, paused: Bool = false) {
            self.rid = rid
            self.paused = paused
        }

        var sdpValue: String { (paused ? "~" : "") + rid }
    }

    public var send: [Stream]
    public var recv: [Stream]

    public init(send: [Stream] = [], recv: [Stream] = []) {
        self.send = send
        self.recv = recv
    }

    public init(sdpValue value: String) throws(SDPError) {
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard !parts.isEmpty, parts.count % 2 == 0, parts.count <= 4 else {
            throw SDPError(reason: "a=simulcast needs one or two '<send|recv> <streams>' pairs")
        }
        var send: [Stream]?
        var recv: [Stream]?
        for index in stride(from: 0, to: parts.count, by: 2) {
            var streams: [Stream] = []
            for entry in parts[index + 1].split(separator: ";", omittingEmptySubsequences: false) {
                guard var first = entry.split(separator: ",", omittingEmptySubsequences: false).first else {
                    throw SDPError(reason: "a=simulcast has an empty stream")
                }
                let paused = first.hasPrefix("~")
                if paused { first = first.dropFirst() }
                guard RIDDescription.isValidID(first) else {
                    throw SDPError(reason: "a=simulcast stream '\(entry.prefix(40))' is not a RID")
                }
                guard !streams.contains(where: { $0.rid == first }) else {
                    throw SDPError(reason: "a=simulcast names RID '\(first)' twice")
                }
                streams.append(Stream(rid: String(first), paused: paused))
            }
            switch parts[index] {
            case "send" where send == nil: send = streams
            case "recv" where recv == nil: recv = streams
            default:
                throw SDPError(
                    reason: "a=simulcast direction '\(parts[index].prefix(20))' is not send or recv, or repeats")
            }
        }
        self.send = send ?? []
        self.recv = recv ?? []
    }

    public var sdpValue: String {
        var parts: [String] = []
        if !send.isEmpty { parts.append("send " + send.map(\.sdpValue).joined(separator: ";")) }
        if !recv.isEmpty { parts.append("recv " + recv.map(\.sdpValue).joined(separator: ";")) }
        return parts.joined(separator: " ")
    }
}

extension MediaDescription {
    /// The section's `a=rid` lines that parse, in order.
    public var rids: [RIDDescription] {
        attributes.filter { $0.name == "rid" }.compactMap { try? RIDDescription(sdpValue: $0.value ?? "") }
    }

    /// The section's `a=simulcast`, if it has one that parses.
    public var simulcast: SimulcastDescription? {
        attributes.first { $0.name == "simulcast" }.flatMap { try? SimulcastDescription(sdpValue: $0.value ?? "") }
    }

    /// Writes `a=rid:<id> send` for each RID and `a=simulcast:send <rids>` (best first), replacing
    /// any the section had.
    mutating func applySimulcast(sending rids: [String]) {
        attributes.removeAll { $0.name == "rid" || $0.name == "simulcast" }
        guard !rids.isEmpty else { return }
        attributes += rids.map { SDPAttribute(name: "rid", value: RIDDescription(id: $0, direction: .send).sdpValue) }
        attributes.append(
            SDPAttribute(name: "simulcast", value: SimulcastDescription(send: rids.map { .init(rid: $0) }).sdpValue))
    }
}
