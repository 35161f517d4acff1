import RTPWire
import VideoSend

/// The receive side of transport-wide congestion control (draft-holmer-rmcat-transport-wide-cc-
/// extensions-01): remembers when each packet with a transport-wide sequence number arrived and,
/// when asked (every 100 ms), turns them into feedback messages for the sender's estimate. Every
/// number from the first seen on is reported once, as arrived or as not received; a packet that
/// arrives after its number was reported missing is not reported again. A value; no clock is read.
struct TransportFeedbackRecorder: Sendable {
    /// The most statuses one message carries (a gap larger than this starts afresh).
    static let maximumStatuses = 4096

    private var arrivals: [Int64: Int64] = [:]
    private var highest: Int64?
    private var nextToReport: Int64?
    private var feedbackCount: UInt8 = 0

    init() {}

    var waiting: Int { arrivals.count }

    mutating func received(sequence: UInt16, arrivalMicros: Int64) {
        let unwrapped = TransportFeedbackAdapter.unwrap(sequence, near: highest)
        if let next = nextToReport, unwrapped < next { return }
        highest = max(highest ?? unwrapped, unwrapped)
        if arrivals[unwrapped] == nil { arrivals[unwrapped] = arrivalMicros }
    }

    /// The feedback for everything since the last call; empty when nothing arrived.
    mutating func feedback(senderSSRC: UInt32, mediaSSRC: UInt32) -> [TransportWideFeedback] {
        guard let last = highest, let lowest = arrivals.keys.min() else { return [] }
        var base = nextToReport ?? lowest
        if last - base >= Int64(Self.maximumStatuses) { base = lowest }
        let ordered = arrivals.filter { $0.key >= base }.sorted { $0.key < $1.key }
        arrivals = [:]
        nextToReport = last + 1
        guard !ordered.isEmpty else { return [] }
        let list = ordered.map {
            (sequenceNumber: UInt16(truncatingIfNeeded: $0.key), arrivalTime: Duration.microseconds($0.value))
        }
        guard
            let built = try? TransportWideFeedback(
                senderSSRC: senderSSRC, mediaSSRC: mediaSSRC,
                feedbackPacketCount: feedbackCount, arrivals: list)
        else {
            // A receive delta over ±8 s between two packets: the gap is not worth reporting.
            return []
        }
        feedbackCount &+= 1
        // Numbers before the first arrival that were never seen are reported missing.
        let missing = Int(ordered[0].key - base)
        guard missing > 0 else { return [built] }
        return [
            TransportWideFeedback(
                senderSSRC: senderSSRC, mediaSSRC: mediaSSRC,
                baseSequenceNumber: UInt16(truncatingIfNeeded: base), referenceTime: built.referenceTime,
                feedbackPacketCount: built.feedbackPacketCount,
                statuses: Array(repeating: .notReceived, count: missing) + built.statuses)
        ]
    }
}
