/// Answers a remote offer (RFC 3264, JSEP RFC 9429 §5.3) from our capabilities.
///
/// Per offered media section, in order and with its mid:
/// - rejected (port 0) when it was rejected in the offer, is not audio or video, is not
///   DTLS-SRTP (`UDP/TLS/RTP/SAVPF` and kin), lacks `a=rtcp-mux`, we want nothing of that kind,
///   no offered codec is ours, or it is past `limit` (a hostile offer of many sections);
/// - otherwise accepted with the offered payload types we take, best first by our preference
///   (H.264 Constrained Baseline, then Main, then VP8; Opus), each followed by its RTX type; the
///   rtcp-fb we support; the extmaps we use, under the offered ids; and the direction our wish
///   allows against theirs (their `sendonly` → at most our `recvonly`).
///
/// Accepted sections the offer bundled are bundled in the answer; the first one carries the
/// candidates.
public struct AnswerBuilder: Hashable, Sendable {
    public var capabilities: CodecCapabilities
    public var transport: LocalTransport
    public var origin: Origin
    /// What we want for video sections (nil: reject them). Narrowed by what the offer allows.
    public var video: MediaDirection?
    /// What we want for audio sections (nil: reject them).
    public var audio: MediaDirection?
    /// Our video track, written into the first video section we send on.
    public var videoTrack: LocalTrack?
    /// Our audio track, written into the first audio section we send on.
    public var audioTrack: LocalTrack?
    /// How many audio and video sections we take; the rest are rejected.
    public var limit: SectionLimit

    public init(
        capabilities: CodecCapabilities = .sharectl, transport: LocalTransport, origin: Origin,
        video: MediaDirection? = .sendrecv, audio: MediaDirection? = .sendrecv,
        videoTrack: LocalTrack? = nil, audioTrack: LocalTrack? = nil, limit: SectionLimit = .sharectl
    ) {
        self.capabilities = capabilities
        self.transport = transport
        self.origin = origin
        self.video = video
        self.audio = audio
        self.videoTrack = videoTrack
        self.audioTrack = audioTrack
        self.limit = limit
    }

    /// The answer to `offer`.
    public func answer(to offer: SessionDescription) -> SessionDescription {
        let offeredBundle = Set(offer.bundleGroup?.mids ?? [])
        var sections: [MediaDescription] = []
        var bundled: [String] = []
        var carriedCandidates = false
        var usedTracks: Set<MediaKind> = []
        var streams: [String] = []

        for (offered, admitted) in zip(offer.media, limit.admitted(offer)) {
            guard admitted, var section = accepted(offered, in: offer) else {
                sections.append(rejected(offered))
                continue
            }
            let inBundle = offered.mid.map(offeredBundle.contains) ?? false
            if inBundle, let mid = offered.mid { bundled.append(mid) }
            section.applyLocalTransport(transport, carriesCandidates: !inBundle || !carriedCandidates)
            carriedCandidates = carriedCandidates || inBundle
            let track = offered.kind == .video ? videoTrack : audioTrack
            if section.direction?.sends == true, let track, !usedTracks.contains(offered.kind) {
                usedTracks.insert(offered.kind)
                let rtx = section.payloads.contains { $0.associatedPayloadType != nil }
                section.applyLocalTrack(track, rtx: rtx)
                if !streams.contains(track.streamID) { streams.append(track.streamID) }
            }
            sections.append(section)
        }

        return SessionDescription(
            origin: origin,
            groups: offer.bundleGroup == nil ? [] : [.bundle(bundled)],
            msidSemantic: MSIDSemantic(identifiers: streams),
            media: sections)
    }

    /// The section we answer with when we take `offered`, without transport and tracks yet.
    private func accepted(_ offered: MediaDescription, in offer: SessionDescription) -> MediaDescription? {
        let wish: MediaDirection?
        switch offered.kind {
        case .video: wish = video
        case .audio: wish = audio
        default: return nil
        }
        guard let wish, !offered.isRejected, offered.rtcpMux, AnswerBuilder.isDTLSSRTP(offered.proto) else {
            return nil
        }
        let payloads = chosenPayloads(offered)
        guard !payloads.isEmpty else { return nil }
        return MediaDescription(
            kind: offered.kind, proto: offered.proto, formats: payloads.map { String($0.payloadType) },
            mid: offered.mid,
            extensions: offered.extensions.filter { capabilities.headerExtensions.contains($0.uri) }.map {
                ExtensionMap(id: $0.id, direction: $0.direction?.reversed, uri: $0.uri)
            },
            direction: .answering(offer.direction(of: offered), wanting: wish),
            rtcpMux: true, rtcpReducedSize: offered.rtcpReducedSize, payloads: payloads)
    }

    /// The offered payload types we take, best first, each followed by its RTX type.
    private func chosenPayloads(_ offered: MediaDescription) -> [PayloadFormat] {
        let ranked = offered.payloads.enumerated().compactMap { index, payload -> (Int, Int, PayloadFormat)? in
            capabilities.rank(of: payload).map { ($0, index, payload) }
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)

        var chosen: [PayloadFormat] = []
        for payload in ranked {
            guard let codec = capabilities.codec(of: payload) else { continue }
            var answer = payload
            answer.feedback = capabilities.supportedFeedback(payload.feedback, kind: offered.kind)
            if codec == .opus { answer.parameters = capabilities.opusParameters }
            chosen.append(answer)
            if capabilities.rtx, codec.kind == .video,
                let rtxType = offered.rtxPayloadType(for: payload.payloadType),
                let rtxMap = offered.payload(rtxType)?.rtpMap, rtxMap.clockRate == codec.clockRate
            {
                chosen.append(
                    PayloadFormat(
                        payloadType: rtxType, rtpMap: rtxMap,
                        parameters: [FormatParameter("apt", String(payload.payloadType))]))
            }
        }
        return chosen
    }

    /// A rejected section: port 0, the offered formats, and the mid.
    private func rejected(_ offered: MediaDescription) -> MediaDescription {
        MediaDescription(
            kind: offered.kind, port: 0, proto: offered.proto, formats: offered.formats,
            connection: .unspecified, mid: offered.mid)
    }

    /// True for the RTP profiles WebRTC uses over DTLS-SRTP.
    static func isDTLSSRTP(_ proto: String) -> Bool {
        ["UDP/TLS/RTP/SAVPF", "TCP/DTLS/RTP/SAVPF", "UDP/TLS/RTP/SAVP", "TCP/TLS/RTP/SAVPF"].contains(proto)
    }
}
