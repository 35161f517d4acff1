// libFuzzer target for SDPWire: any text either fails to parse with an SDPError, or parses to a
// description that serializes to text which parses back to the same value (and the same text).
// Answering it, reading it as a trickled candidate, and reading its sections' simulcast lines
// (a=rid, a=simulcast) must not crash either; what those read writes back as it read.
import SDPWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)

    if let candidate = try? ICECandidate(parsing: text) {
        let again = try? ICECandidate(parsing: candidate.candidateString)
        precondition(again == candidate, "candidate round trip changed it")
    }

    guard let description = try? SessionDescription.parse(text) else { return 0 }
    let written = description.serialize()
    let reparsed: SessionDescription
    do {
        reparsed = try SessionDescription.parse(written)
    } catch {
        preconditionFailure("serialized description does not parse: \(error)")
    }
    precondition(reparsed == description, "parse → serialize → parse changed the description")
    precondition(reparsed.serialize() == written, "serialize is not stable")

    for section in description.media {
        for rid in section.rids {
            precondition((try? RIDDescription(sdpValue: rid.sdpValue)) == rid, "a=rid round trip changed it")
        }
        if let simulcast = section.simulcast, !simulcast.sdpValue.isEmpty {
            precondition(
                (try? SimulcastDescription(sdpValue: simulcast.sdpValue)) == simulcast,
                "a=simulcast round trip changed it")
        }
    }

    let transport = LocalTransport(
        iceUfrag: "fuzz", icePwd: "fuzzfuzzfuzzfuzzfuzzfuzz",
        fingerprint: Fingerprint(bytes: Array(repeating: 0xAB, count: 32)), setup: .active)
    let answer = AnswerBuilder(transport: transport, origin: Origin(sessionID: "1", sessionVersion: 1))
        .answer(to: description)
    let answerText = answer.serialize()
    precondition((try? SessionDescription.parse(answerText)) == answer, "answer does not round-trip")
    return 0
}
