import RTPWire

/// Feeds arbitrary bytes to the RTP parser, the RFC 8285 extension parser, the rtcp-mux
/// classifier and RTX unwrapping. Whatever parses must serialize to bytes that parse back to the
/// same packet.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    _ = RTPDemux.classify(bytes)
    guard let packet = try? RTPPacket.parse(bytes) else { return 0 }

    // A parsed packet always serializes, to the input with its padding bytes zeroed (the
    // extension data is whole words), and parses back to the same packet.
    guard let wire = try? packet.serialize() else { preconditionFailure("parsed RTP packet does not serialize") }
    let unpadded = bytes.count - Int(packet.paddingSize)
    precondition(wire.count == bytes.count && wire[..<unpadded] == bytes[..<unpadded], "RTP serialize(parse(x)) != x")
    precondition((try? RTPPacket.parse(wire)) == packet, "RTP parse(serialize(p)) != p")
    precondition(wire.count == packet.serializedSize, "serializedSize disagrees with serialize()")
    precondition(RTPDemux.classify(wire) != nil, "a version 2 packet must classify")

    // Header extension elements: whatever parses re-packs to elements that parse identically.
    if let elements = try? packet.headerExtensionElements(), !elements.isEmpty {
        var copy = packet
        if (try? copy.setHeaderExtensionElements(elements)) != nil {
            guard let again = try? copy.headerExtensionElements() else {
                preconditionFailure("re-packed header extension does not parse")
            }
            precondition(again == elements, "header extension elements changed in a round trip")
        }
        let map = HeaderExtensionMap([1: AbsSendTime.uri, 2: TransportSequenceNumber.uri, 3: MediaIdentification.uri])
        _ = try? map.value(AbsSendTime.self, in: elements)
        _ = try? map.value(TransportSequenceNumber.self, in: elements)
        _ = try? map.value(MediaIdentification.self, in: elements)
    }

    // RTX: unwrap then wrap again gives the RTX packet back.
    if let original = try? RTX.unwrap(packet, originalSSRC: 0x1234_5678, originalPayloadType: 96) {
        let rewrapped = RTX.wrap(
            original, rtxSSRC: packet.ssrc, rtxPayloadType: packet.payloadType, rtxSequenceNumber: packet.sequenceNumber
        )
        precondition(rewrapped == packet, "RTX wrap(unwrap(x)) != x")
    }
    return 0
}
