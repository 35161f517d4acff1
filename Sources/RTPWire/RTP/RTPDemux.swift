// RFC 5761 §4 Distinguishable RTP and RTCP Packets
//
// With rtcp-mux, RTP and RTCP share one transport. The second byte of an RTCP packet is its packet
// type (192–223 in use); read as an RTP header that byte is the marker bit and a payload type of
// 64–95, which RTP sessions must therefore not use.
//
//  0                   1
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|X|  CC   |M|     PT      |   PT & 0x7F in 64...95 → RTCP
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// Tells RTP from RTCP on a multiplexed transport (RFC 5761 §4).
public enum RTPDemux {
    /// What a packet on an rtcp-mux transport is.
    public enum Kind: Hashable, Sendable {
        case rtp
        case rtcp
    }

    /// The kind of `bytes`, or nil when it is shorter than two bytes or not version 2.
    public static func classify<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Kind? {
        var iterator = bytes.makeIterator()
        guard let first = iterator.next(), let second = iterator.next(), first >> 6 == 2 else { return nil }
        return (64...95).contains(second & 0x7F) ? .rtcp : .rtp
    }

    /// Whether `bytes` is an RTCP packet on an rtcp-mux transport: version 2 and a second byte
    /// whose low 7 bits fall in 64...95 (RTCP packet types 192–223).
    public static func isRTCP<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        classify(bytes) == .rtcp
    }
}
