import RTPWire

/// One packet the transport-wide feedback told us about: when and how big it left (our clock),
/// and when it arrived (the receiver's clock, which only differences of make sense), or nil
/// when the receiver reported it lost.
public struct PacketFeedback: Sendable, Hashable {
    public var sequence: Int64
    public var sendMicros: Int64
    public var size: Int
    public var arrivalMicros: Int64?
}

/// Matches transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-
/// extensions-01) to the packets we sent: the send side remembers each transport-wide sequence
/// number with its release time and size; a feedback message turns into `PacketFeedback`s, sorted
/// by sequence. Sequence numbers and the feedback's 24-bit reference time are unwrapped. A value;
/// no clock is read.
public struct TransportFeedbackAdapter: Sendable {
    private struct Sent { var sendMicros: Int64; var size: Int }

    /// How long a sent packet waits for its feedback before it is forgotten.
    public var retentionMicros: Int64 = 10_000_000
    private var sent: [Int64: Sent] = [:]
    private var oldest: Int64?
    private var lastSentSequence: Int64?
    private var lastReference: Int64?

    public init() {}

    /// The packet with transport-wide sequence number `sequence` left now with `size` bytes;
    /// returns the number unwrapped.
    @discardableResult
    public mutating func packetSent(sequence: UInt16, size: Int, nowMicros: Int64) -> Int64 {
        let unwrapped = Self.unwrap(sequence, near: lastSentSequence)
        lastSentSequence = unwrapped
        sent[unwrapped] = Sent(sendMicros: nowMicros, size: size)
        if oldest == nil { oldest = unwrapped }
        // Forget what the receiver never reported on.
        while let first = oldest, first < unwrapped {
            if let entry = sent[first], nowMicros - entry.sendMicros < retentionMicros { break }
            sent[first] = nil
            oldest = first + 1
        }
        return unwrapped
    }

    public var packetsAwaitingFeedback: Int { sent.count }

    /// The packets this feedback reports, with their send times. Packets we have no record of
    /// (forgotten, or never ours) are skipped; a reported packet is forgotten once it arrived.
    public mutating func feedback(_ message: TransportWideFeedback) -> [PacketFeedback] {
        // The reference time counts 64 ms in 24 signed bits; unwrap it across messages.
        let reference = Int64(message.referenceTime)
        var unwrappedReference = reference
        if let last = lastReference {
            let span: Int64 = 1 << 24
            var delta = (reference - last) % span
            if delta < 0 { delta += span }
            if delta >= span / 2 { delta -= span }
            unwrappedReference = last + delta
        }
        lastReference = unwrappedReference
        let offsetMicros = (unwrappedReference - reference) * 64_000
        var out: [PacketFeedback] = []
        out.reserveCapacity(message.statuses.count)
        for result in message.packetResults {
            let sequence = Self.unwrap(result.sequenceNumber, near: lastSentSequence)
            guard let packet = sent[sequence] else { continue }
            var arrival: Int64?
            if let time = result.arrivalTime {
                let (seconds, attoseconds) = time.components
                arrival = seconds * 1_000_000 + attoseconds / 1_000_000_000_000 + offsetMicros
                sent[sequence] = nil
            }
            out.append(
                PacketFeedback(
                    sequence: sequence, sendMicros: packet.sendMicros, size: packet.size,
                    arrivalMicros: arrival))
        }
        return out
    }

    /// The 64-bit number nearest `reference` whose low 16 bits are `value`.
    public static func unwrap(_ value: UInt16, near reference: Int64?) -> Int64 {
        guard let reference else { return Int64(value) }
        let delta = Int64(Int16(bitPattern: value &- UInt16(truncatingIfNeeded: reference)))
        return reference + delta
    }
}
