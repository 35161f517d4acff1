/// The peer's trickled candidates that arrive before its description (signalling may deliver
/// them first): kept, up to `limit`, and handed over once when the description is applied. A
/// peer that floods them loses the rest, and the connection says so once. A pure value.
struct EarlyCandidates: Sendable, Equatable {
    /// What became of one candidate.
    enum Outcome: Equatable {
        case kept
        /// The first over the limit: worth one warning.
        case firstDropped
        /// Later ones over the limit: dropped without a word.
        case dropped
    }

    static let limit = 64

    private(set) var lines: [String] = []
    private(set) var endOfCandidates = false
    private(set) var dropped = 0

    mutating func add(_ line: String) -> Outcome {
        guard lines.count < Self.limit else {
            dropped += 1
            return dropped == 1 ? .firstDropped : .dropped
        }
        lines.append(line)
        return .kept
    }

    mutating func end() { endOfCandidates = true }

    /// Everything kept, once: the store is empty afterwards.
    mutating func take() -> (lines: [String], endOfCandidates: Bool) {
        defer { self = EarlyCandidates() }
        return (lines, endOfCandidates)
    }
}
