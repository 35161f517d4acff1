import SDPWire
import VideoSend

/// What an answer settled for one call leg: per medium, the payload types and header-extension
/// ids to send with; for the transport, the peer's ICE credentials and candidates, its DTLS
/// fingerprint and which DTLS role we play. Read from the remote answer to our offer.
public struct Negotiation: Sendable {
    public struct Video: Sendable {
        public var mid: String
        public var codec: VideoCodec
        public var payloadType: UInt8
        public var rtxPayloadType: UInt8?
        public var extensions: SendExtensions
        /// What the answerer will send back: nack, nack pli, ccm fir, transport-cc, goog-remb.
        public var feedback: [String]
    }

    public struct Audio: Sendable {
        public var mid: String
        public var payloadType: UInt8
        public var extensions: SendExtensions
    }

    public var video: Video?
    public var audio: Audio?
    public var iceUfrag: String
    public var icePwd: String
    public var candidates: [String]
    public var fingerprint: DTLSFingerprint
    public var dtlsRole: DTLSRole

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Reads `answer` (the remote description answering `offer`).
    public static func read(answer: SessionDescription, offer: SessionDescription) throws(Failure) -> Negotiation {
        guard let first = answer.media.first(where: { !$0.isRejected }) else {
            throw Failure(description: "the answer rejects every media section")
        }
        let transport = answer.transport(for: first)
        guard let ufrag = transport.iceUfrag, let pwd = transport.icePwd else {
            throw Failure(description: "the answer has no ICE credentials (a=ice-ufrag, a=ice-pwd)")
        }
        guard let fingerprintLine = transport.fingerprints.first else {
            throw Failure(description: "the answer has no DTLS fingerprint (a=fingerprint)")
        }
        let fingerprint: DTLSFingerprint
        do {
            fingerprint = try DTLSFingerprint(sdpValue: "\(fingerprintLine.algorithm) \(fingerprintLine.hexString)")
        } catch {
            throw Failure(description: "the answer's fingerprint is unusable: \(error)")
        }
        // RFC 5763: the answerer chooses active or passive; we play the other side.
        let role: DTLSRole
        switch transport.setup {
        case .active: role = .server
        case .passive: role = .client
        case .actpass, .none: role = .client
        case .holdconn: throw Failure(description: "the answer holds the DTLS connection (a=setup:holdconn)")
        }
        var candidates: [String] = []
        for section in answer.media where !section.isRejected {
            for candidate in section.candidates where !candidates.contains(candidate.candidateString) {
                candidates.append(candidate.candidateString)
            }
        }

        var negotiation = Negotiation(video: nil, audio: nil, iceUfrag: ufrag, icePwd: pwd, candidates: candidates,
                                      fingerprint: fingerprint, dtlsRole: role)
        for section in answer.media where !section.isRejected {
            guard let mid = section.mid, offer.media(mid: mid) != nil else { continue }
            let extensions = SendExtensions(
                mid: section.extensions.first { $0.uri == ExtensionMap.sdesMid }.map { (UInt8(truncatingIfNeeded: $0.id), mid) },
                absSendTimeID: section.extensions.first { $0.uri == ExtensionMap.absSendTime }.map { UInt8(truncatingIfNeeded: $0.id) },
                transportSequenceID: section.extensions.first { $0.uri == ExtensionMap.transportWideCC }.map { UInt8(truncatingIfNeeded: $0.id) })
            switch section.kind {
            case .video where negotiation.video == nil:
                for payload in section.payloads {
                    guard let name = payload.rtpMap?.encodingName.lowercased() else { continue }
                    let codec: VideoCodec? = name == "h264" ? .h264 : name == "vp8" ? .vp8 : nil
                    guard let codec else { continue }
                    if codec == .h264, payload.parameter("packetization-mode") != "1" { continue }
                    negotiation.video = Video(
                        mid: mid, codec: codec, payloadType: payload.payloadType,
                        rtxPayloadType: section.rtxPayloadType(for: payload.payloadType), extensions: extensions,
                        feedback: (payload.feedback + section.feedbackForAllPayloads).map { [$0.type, $0.parameter].compactMap { $0 }.joined(separator: " ") })
                    break
                }
                if negotiation.video == nil {
                    throw Failure(description: "the answer accepts video but with no codec we send (H.264 packetization-mode 1 or VP8)")
                }
            case .audio where negotiation.audio == nil:
                if let opus = section.payloads.first(where: { $0.rtpMap?.isEncoding("opus") == true }) {
                    negotiation.audio = Audio(mid: mid, payloadType: opus.payloadType, extensions: extensions)
                }
            default:
                continue
            }
        }
        guard negotiation.video != nil || negotiation.audio != nil else {
            throw Failure(description: "the answer accepts no media we send")
        }
        return negotiation
    }
}
