import RTPWire

/// Feeds arbitrary bytes to the compound RTCP parser. Whatever parses must serialize, parse
/// back, and serialize again to the same bytes (the first serialization drops padding and
/// normalizes optional encodings, such as TWCC chunk choice).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let packets = try? RTCPCompound.parse(bytes) else { return 0 }
    precondition(!packets.isEmpty, "a compound that parses holds at least one packet")

    guard let wire = try? RTCPCompound.serialize(packets) else {
        preconditionFailure("parsed RTCP packets do not serialize")
    }
    guard let again = try? RTCPCompound.parse(wire) else {
        preconditionFailure("serialized RTCP does not parse")
    }
    precondition(again.count == packets.count, "packet count changed in a round trip")
    guard let wireAgain = try? RTCPCompound.serialize(again) else {
        preconditionFailure("re-parsed RTCP packets do not serialize")
    }
    precondition(wireAgain == wire, "RTCP serialization is not stable")

    // Semantics survive the round trip even where the bytes were normalized.
    for (before, after) in zip(packets, again) {
        switch (before, after) {
        case let (.transportWideFeedback(a), .transportWideFeedback(b)):
            precondition(a == b, "TWCC changed in a round trip")
            _ = a.packetResults
        case let (.genericNACK(a), .genericNACK(b)):
            precondition(a.lostSequenceNumbers == b.lostSequenceNumbers, "NACK changed in a round trip")
            let rebuilt = GenericNACK(
                senderSSRC: a.senderSSRC, mediaSSRC: a.mediaSSRC, lostSequenceNumbers: a.lostSequenceNumbers)
            precondition(Set(rebuilt.lostSequenceNumbers) == Set(a.lostSequenceNumbers), "NACK rebuild lost numbers")
        case let (.receiverEstimatedMaxBitrate(a), .receiverEstimatedMaxBitrate(b)):
            precondition(a == b, "REMB changed in a round trip")
        case let (.pictureLossIndication(a), .pictureLossIndication(b)):
            precondition(a == b, "PLI changed in a round trip")
        case let (.fullIntraRequest(a), .fullIntraRequest(b)):
            precondition(a == b, "FIR changed in a round trip")
        case let (.sourceDescription(a), .sourceDescription(b)):
            precondition(a == b, "SDES changed in a round trip")
        case let (.goodbye(a), .goodbye(b)):
            precondition(a.sources == b.sources && a.reason == b.reason, "BYE changed in a round trip")
        case let (.senderReport(a), .senderReport(b)):
            precondition(a.ssrc == b.ssrc && a.reports == b.reports, "SR changed in a round trip")
        case let (.receiverReport(a), .receiverReport(b)):
            precondition(a.ssrc == b.ssrc && a.reports == b.reports, "RR changed in a round trip")
        case (.unknown, .unknown):
            break
        default:
            preconditionFailure("packet kind changed in a round trip")
        }
    }
    return 0
}
