// RFC 7587 RTP Payload Format for Opus, receiving side: each payload is one Opus packet.

import ShareCore

/// Takes Opus packets out of RTP payloads (RFC 7587), reporting sequence gaps so the decoder can
/// conceal them. Every packet is a frame of its own and decodes on its own (`isKeyframe` is true).
///
/// Feed packets in sequence-number order (the jitter buffer's job); late and duplicate packets
/// (up to 1000 behind) are ignored, a packet further behind is taken as the sender numbering
/// afresh. A malformed packet throws and is treated as lost.
public struct OpusDepayloader: Hashable, Sendable {
    private var lastSequenceNumber: UInt16?

    public init() {}

    /// Takes one RTP packet's payload and header fields; returns a gap, if one ended here, and the packet.
    public mutating func push(
        _ payload: [UInt8], sequenceNumber: UInt16, timestamp: UInt32,
        marker: Bool
    ) throws(WireError) -> [DepayloadEvent] {
        var events: [DepayloadEvent] = []
        if let last = lastSequenceNumber {
            switch SequenceOrder(sequenceNumber, after: last) {
            case .lateOrDuplicate: return []
            case let .ahead(missing) where missing > 0: events.append(.gap(after: last, missing: missing))
            default: break
            }
        }
        guard !payload.isEmpty else {
            throw .truncated(what: "opus: RTP payload", got: 0, need: 1)
        }
        _ = try OpusPacketInfo(packet: payload)
        lastSequenceNumber = sequenceNumber
        events.append(
            .frame(
                DepayloadedFrame(
                    bytes: payload, isKeyframe: true, timestamp: timestamp,
                    firstSequenceNumber: sequenceNumber, lastSequenceNumber: sequenceNumber)))
        return events
    }
}
