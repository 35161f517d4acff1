import RTPWire
import ShareCore

/// The packets a stream sent recently, kept for retransmission when a receiver NACKs them
/// (RFC 4585 generic NACK, answered on the RTX stream of RFC 4588). Holds every packet of the last
/// `retention` (at least a second) up to `capacity` packets. Safe from any thread: the sender stores
/// from its thread, RTCP handling looks up from the GLib loop thread.
public final class RetransmissionHistory: Sendable {
    public struct Counters: Sendable, Hashable {
        public var stored = 0
        public var nacksReceived = 0
        public var requested = 0
        public var retransmitted = 0
        public var missing = 0
        /// Asked for again within a round trip of their last retransmission.
        public var tooSoon = 0
    }

    private struct Entry {
        var packet: RTPPacket
        var sentMicros: Int64
        var lastRetransmitMicros: Int64?
    }

    private struct State {
        var slots: [Entry?]
        var counters = Counters()
    }

    public let capacity: Int
    public let retentionMicros: Int64
    /// A packet is resent at most once per this interval (a burst of NACKs for one loss).
    public let minResendIntervalMicros: Int64
    private let state: Locked<State>

    public init(capacity: Int = 2048, retentionMicros: Int64 = 1_500_000, minResendIntervalMicros: Int64 = 20_000) {
        precondition(capacity > 0 && capacity <= 65536)
        self.capacity = capacity
        self.retentionMicros = retentionMicros
        self.minResendIntervalMicros = minResendIntervalMicros
        state = Locked(State(slots: Array(repeating: nil, count: capacity)))
    }

    public func store(_ packet: RTPPacket, sentMicros: Int64) {
        state.withLock { state in
            state.slots[Int(packet.sequenceNumber) % capacity] = Entry(packet: packet, sentMicros: sentMicros)
            state.counters.stored += 1
        }
    }

    /// The packets a NACK asks for that are still held and not resent too recently — within
    /// `rttMicros` (a retransmission has not had time to arrive yet: asking again is the same
    /// loss), or `minResendIntervalMicros` when that is longer; marks them resent.
    public func packetsToResend(for sequenceNumbers: [UInt16], now: Int64, rttMicros: Int64? = nil) -> [RTPPacket] {
        let interval = max(minResendIntervalMicros, rttMicros ?? 0)
        return state.withLock { state in
            state.counters.nacksReceived += 1
            var out: [RTPPacket] = []
            for sequence in sequenceNumbers {
                state.counters.requested += 1
                let index = Int(sequence) % capacity
                guard var entry = state.slots[index], entry.packet.sequenceNumber == sequence,
                    now - entry.sentMicros <= retentionMicros
                else {
                    state.counters.missing += 1
                    continue
                }
                if let last = entry.lastRetransmitMicros, now - last < interval {
                    state.counters.tooSoon += 1
                    continue
                }
                entry.lastRetransmitMicros = now
                state.slots[index] = entry
                state.counters.retransmitted += 1
                out.append(entry.packet)
            }
            return out
        }
    }

    public var counters: Counters { state.withLock { $0.counters } }
}
