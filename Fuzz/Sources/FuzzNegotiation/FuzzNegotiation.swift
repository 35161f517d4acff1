// libFuzzer target for what the client reads from a peer's description: DTLS fingerprints
// (DTLSFingerprint, the SDP value half; the OpenSSL half cannot be linked here) and
// SessionNegotiation (Sources/CallsClient, linked here as source). The first byte picks:
//   0  a fingerprint value: one that reads has its hash's digest length, writes out as uppercase
//      hex that reads back equal (and equal in lowercase), and equals only itself;
//   1, 2  an offer and an answer separated by a line "--" (1: we offered, 2: we answered): what
//      negotiates names only sections both descriptions have, with payload types the answer
//      lists, a digest of the right length and a role the answer's a=setup allows.
import Foundation
import SDPWire
import ScriptInput

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = ScriptInput(start, count)
    let mode = input.byte() % 3
    let text = String(decoding: input.rest(), as: UTF8.self)
    if mode == 0 { fingerprint(text) } else { negotiation(text, weOffered: mode == 1) }
    return 0
}

private func fingerprint(_ text: String) {
    guard let value = try? DTLSFingerprint(sdpValue: text) else { return }
    check(
        value.digest.count == value.algorithm.digestLength, "a \(value.algorithm) digest of \(value.digest.count) bytes"
    )
    let written = value.sdpValue
    check(written.count == value.algorithm.rawValue.count + 1 + value.digest.count * 3 - 1, "odd length: \(written)")
    check((try? DTLSFingerprint(sdpValue: written)) == value, "fingerprint \(written) does not read back equal")
    check((try? DTLSFingerprint(sdpValue: written.lowercased())) == value, "lowercase \(written) reads differently")
    var other = value.digest
    other[other.count - 1] ^= 1
    check((try? DTLSFingerprint(algorithm: value.algorithm, digest: other)) != value, "two digests compare equal")
}

private func negotiation(_ text: String, weOffered: Bool) {
    let parts = text.components(separatedBy: "\n--\n")
    guard parts.count == 2, let offer = try? SessionDescription.parse(parts[0]),
        let answer = try? SessionDescription.parse(parts[1])
    else { return }
    let remote = weOffered ? answer : offer
    if let transport = try? SessionNegotiation.remoteTransport(remote, remoteIsAnswer: weOffered) {
        check(!transport.fingerprints.isEmpty, "a remote transport without a fingerprint")
        for fingerprint in transport.fingerprints {
            check(fingerprint.digest.count == fingerprint.algorithm.digestLength, "a fingerprint of the wrong length")
        }
        check(Set(transport.fingerprints).count == transport.fingerprints.count, "a fingerprint listed twice")
        let accepted = DTLSFingerprint.accepted(transport.fingerprints)
        check(!accepted.isEmpty, "every fingerprint refused although some were offered")
        check(
            !accepted.contains { $0.algorithm == .sha1 } || !transport.fingerprints.contains { $0.algorithm.isStrong },
            "a SHA-1 fingerprint accepted beside a stronger one")
        check(Set(transport.candidates).count == transport.candidates.count, "a candidate listed twice")
        if weOffered, let first = remote.media.first(where: { !$0.isRejected }) {
            if case .active? = remote.transport(for: first).setup {
                check(transport.dtlsRole == DTLSRole.server, "an answer that is active left us the client")
            }
        }
    }
    guard let negotiated = try? SessionNegotiation.read(answer: answer, offer: offer, weOffered: weOffered) else {
        return
    }
    check(!negotiated.media.isEmpty, "a negotiation with no media")
    for (mid, media) in negotiated.media {
        check(media.mid == mid, "section \(mid) filed as \(media.mid)")
        guard let answered = answer.media(mid: mid), offer.media(mid: mid) != nil else {
            fatalError("negotiated section \(mid) is not in both descriptions")
        }
        check(!answered.isRejected, "negotiated section \(mid) was rejected")
        check(
            answered.payloads.contains { $0.payloadType == media.payloadType },
            "payload type \(media.payloadType) not in the answer")
        if let rtx = media.rtxPayloadType {
            check(answered.payloads.contains { $0.payloadType == rtx }, "RTX payload type \(rtx) not in the answer")
        }
        check((media.kind == MediaKind.video) == (media.videoCodec != nil), "section \(mid): kind and codec disagree")
    }
}
