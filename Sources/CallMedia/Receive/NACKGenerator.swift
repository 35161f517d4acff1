/// Which video packets to ask again for (RFC 4585 §6.2.1 generic NACK, answered by the sender from
/// its RTX history, RFC 4588). A pure value: packets arrive with their sequence numbers (an RTX
/// packet with the original number it carries) and the time; `due(nowMicros:timing:)` says which
/// missing ones to ask for now.
///
/// A number is missing when a later one has arrived. It is asked for at once, then again after
/// each retry interval, at most `maxTries` times, and given up when the frame buffer stops waiting
/// for it (`RetransmissionTiming.holdMicros`): then only a keyframe mends the picture. A jump of
/// more than `restartDistance` numbers either way is the stream starting afresh, not a loss.
struct NACKGenerator: Sendable {
    static let maxTries = 10
    static let restartDistance: UInt16 = 1000
    /// More missing at once than this is no longer worth asking for one by one.
    static let maxMissing = 1000

    private struct Missing: Sendable {
        var since: Int64
        var lastAsked: Int64?
        var tries = 0
    }

    private var highest: UInt16?
    private var missing: [UInt16: Missing] = [:]
    /// Sequence numbers asked for (each try counts).
    private(set) var requested = 0
    /// Missing numbers that arrived after all (retransmitted, or late).
    private(set) var recovered = 0
    private(set) var givenUp = 0
    private(set) var restarts = 0

    /// One packet's sequence number. True when it was missing (a retransmission or a late packet).
    @discardableResult
    mutating func received(_ sequence: UInt16, nowMicros: Int64) -> Bool {
        guard let top = highest else {
            highest = sequence
            return false
        }
        let ahead = sequence &- top
        if ahead == 0 { return false }
        if ahead < 0x8000 {
            if ahead > Self.restartDistance {
                restart(at: sequence)
                return false
            }
            var next = top &+ 1
            while next != sequence {
                missing[next] = Missing(since: nowMicros)
                next &+= 1
            }
            highest = sequence
            if missing.count > Self.maxMissing {
                givenUp += missing.count
                missing.removeAll()
            }
            return false
        }
        if missing.removeValue(forKey: sequence) != nil {
            recovered += 1
            return true
        }
        if top &- sequence > Self.restartDistance { restart(at: sequence) }
        return false  // a duplicate, or late and no longer asked for
    }

    private mutating func restart(at sequence: UInt16) {
        missing.removeAll()
        highest = sequence
        restarts += 1
    }

    /// The numbers to ask for now, oldest first; they count as asked. Numbers past their last try
    /// or older than the hold are given up.
    mutating func due(nowMicros: Int64, timing: RetransmissionTiming) -> [UInt16] {
        let retry = timing.retryMicros, hold = timing.holdMicros
        var out: [UInt16] = []
        for (sequence, entry) in missing {
            if nowMicros - entry.since > hold || entry.tries >= Self.maxTries {
                missing[sequence] = nil
                givenUp += 1
                continue
            }
            if let last = entry.lastAsked, nowMicros - last < retry { continue }
            missing[sequence]?.lastAsked = nowMicros
            missing[sequence]?.tries += 1
            out.append(sequence)
        }
        requested += out.count
        guard let top = highest else { return out }
        return out.sorted { (top &- $0) > (top &- $1) }  // the furthest below the highest first
    }

    var missingCount: Int { missing.count }
}
