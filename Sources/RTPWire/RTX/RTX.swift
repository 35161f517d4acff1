import ShareCore

// RFC 4588 §4 Retransmission Payload Format
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                         RTP Header                            |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |            OSN                |                               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               |
// |                  Original RTP Packet Payload                  |
// |                                                               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Session multiplexing (as WebRTC uses it): the RTX stream has its own SSRC, its own sequence
// numbers and the RTX payload type whose `apt` names the original one. Marker, timestamp, CSRCs
// and header extension are the original packet's.

/// Wraps RTP packets into RFC 4588 retransmissions and back.
public enum RTX {
    /// The retransmission of `packet` on the RTX stream: same marker, timestamp, CSRCs, header
    /// extension and padding, with the original sequence number (OSN) prepended to the payload.
    public static func wrap(
        _ packet: RTPPacket, rtxSSRC: UInt32, rtxPayloadType: UInt8, rtxSequenceNumber: UInt16
    ) -> RTPPacket {
        var rtx = packet
        rtx.ssrc = rtxSSRC
        rtx.payloadType = rtxPayloadType
        rtx.sequenceNumber = rtxSequenceNumber
        rtx.payload =
            [
                UInt8(truncatingIfNeeded: packet.sequenceNumber >> 8),
                UInt8(truncatingIfNeeded: packet.sequenceNumber)
            ] + packet.payload
        return rtx
    }

    /// The original packet inside retransmission `rtx`. The caller resolves the RTX SSRC to the
    /// original SSRC; `associatedPayloadTypes` maps each RTX payload type to its original (`apt`).
    /// Throws when the payload type is not an RTX one or the payload is too short for an OSN
    /// (RTX padding-only packets, used for probing, carry none: check `payload.isEmpty` first).
    public static func unwrap(
        _ rtx: RTPPacket, originalSSRC: UInt32, associatedPayloadTypes: [UInt8: UInt8]
    ) throws(WireError) -> RTPPacket {
        guard let originalPayloadType = associatedPayloadTypes[rtx.payloadType] else {
            throw .invalid(what: "rtx: payload type", reason: "\(rtx.payloadType) has no apt mapping")
        }
        return try unwrap(rtx, originalSSRC: originalSSRC, originalPayloadType: originalPayloadType)
    }

    /// The original packet inside retransmission `rtx`, given its original SSRC and payload type.
    public static func unwrap(
        _ rtx: RTPPacket, originalSSRC: UInt32, originalPayloadType: UInt8
    ) throws(WireError) -> RTPPacket {
        guard rtx.payload.count >= 2 else {
            throw .truncated(what: "rtx: original sequence number", got: rtx.payload.count, need: 2)
        }
        var original = rtx
        original.ssrc = originalSSRC
        original.payloadType = originalPayloadType
        original.sequenceNumber = UInt16(rtx.payload[0]) << 8 | UInt16(rtx.payload[1])
        original.payload = Array(rtx.payload.dropFirst(2))
        return original
    }
}
