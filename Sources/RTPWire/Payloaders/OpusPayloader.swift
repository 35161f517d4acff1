// RFC 7587 RTP Payload Format for the Opus Speech and Audio Codec: one Opus packet per RTP
// payload, never split or combined (§4.2). The marker bit may flag the first packet of a
// talkspurt after discontinuous transmission (§4.1); the timestamp clock is always 48 kHz.

import ShareCore

/// Puts one Opus packet into one RTP payload, after checking it is a well-formed packet.
public struct OpusPayloader: Hashable, Sendable {
    /// The largest RTP payload to produce, in bytes; a larger Opus packet is refused.
    public var maxPayloadSize: Int

    public init(maxPayloadSize: Int = 1200) { self.maxPayloadSize = maxPayloadSize }

    /// - Parameter startsTalkspurt: the packet is the first after a DTX silence (sets the marker).
    public func payload(_ packet: [UInt8], startsTalkspurt: Bool = false) throws(WireError) -> RTPPayloadUnit {
        guard !packet.isEmpty else {
            throw .invalid(what: "opus: packet", reason: "empty (an Opus packet has at least its TOC byte)")
        }
        guard packet.count <= maxPayloadSize else {
            throw .invalid(
                what: "opus: packet",
                reason: "\(packet.count) bytes exceed the \(maxPayloadSize)-byte payload and cannot be split")
        }
        _ = try OpusPacketInfo(packet: packet)
        return RTPPayloadUnit(payload: packet, marker: startsTalkspurt)
    }
}
