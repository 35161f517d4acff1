import Synchronization

/// RFC 7983 §7 demultiplexing of what arrives on one ICE component, by the first byte:
///
/// ```
///              +----------------+
///              |        [0..3] -+--> STUN
///              |                |
///  packet -->  |      [20..63] -+--> DTLS
///              |                |
///              |    [128..191] -+--> RTP/RTCP
///              |                |
///              |  anything else +--> dropped (ZRTP, TURN channel, QUIC, garbage)
///              +----------------+
/// ```
///
/// RTP and RTCP are told apart by the second byte (RFC 5761 §4: RTCP packet types 192–223).
/// Thread-safe: the counters are atomics a statistics reader takes once a second.
public final class PacketDemux: Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case stun, dtls, rtp, rtcp, dropped
    }

    public struct Counts: Hashable, Sendable {
        public var stun, dtls, rtp, rtcp, dropped: Int

        public init(stun: Int = 0, dtls: Int = 0, rtp: Int = 0, rtcp: Int = 0, dropped: Int = 0) {
            (self.stun, self.dtls, self.rtp, self.rtcp, self.dropped) = (stun, dtls, rtp, rtcp, dropped)
        }
    }

    private let stun = Atomic<Int>(0)
    private let dtls = Atomic<Int>(0)
    private let rtp = Atomic<Int>(0)
    private let rtcp = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    public init() {}

    /// Where `packet` goes, counted.
    public func classify(_ packet: some Collection<UInt8>) -> Kind {
        let kind = Self.kind(of: packet)
        switch kind {
        case .stun: stun.add(1, ordering: .relaxed)
        case .dtls: dtls.add(1, ordering: .relaxed)
        case .rtp: rtp.add(1, ordering: .relaxed)
        case .rtcp: rtcp.add(1, ordering: .relaxed)
        case .dropped: dropped.add(1, ordering: .relaxed)
        }
        return kind
    }

    /// Where `packet` goes (not counted).
    public static func kind(of packet: some Collection<UInt8>) -> Kind {
        guard let first = packet.first else { return .dropped }
        switch first {
        case 0...3: return .stun
        case 20...63: return .dtls
        case 128...191:
            guard packet.count >= 2 else { return .dropped }
            let payloadType = packet[packet.index(after: packet.startIndex)] & 0x7F
            // RFC 5761 §4: with the marker bit folded in, RTCP types 192–223 read as 64–95.
            return (64...95).contains(payloadType) ? .rtcp : .rtp
        default: return .dropped
        }
    }

    public var counts: Counts {
        Counts(
            stun: stun.load(ordering: .relaxed), dtls: dtls.load(ordering: .relaxed),
            rtp: rtp.load(ordering: .relaxed), rtcp: rtcp.load(ordering: .relaxed),
            dropped: dropped.load(ordering: .relaxed))
    }
}
