import RTPWire
/// Makes sharectl's own offer (JSEP RFC 9429 §5.2): a video section (H.264 in our first profile,
/// level 3.1, packetization-mode 1; VP8; each with RTX) and an audio section (Opus), bundled,
/// with rtcp-mux, reduced-size RTCP and the header extensions we use.
///
/// Payload types are given from 96 up in preference order (H.264 96, its RTX 97, VP8 98, RTX 99);
/// Opus is 111 as in browsers. Extension ids: sdes:mid 1, abs-send-time 2, transport-cc 3, and for
/// a simulcast video track rtp-stream-id 4 and repaired-rtp-stream-id 5.
public struct OfferBuilder: Hashable, Sendable {
    public var capabilities: CodecCapabilities
    public var transport: LocalTransport
    public var origin: Origin
    /// Direction of the video section (nil: no video section). A screen share is `.sendonly`.
    public var video: MediaDirection?
    /// Direction of the audio section (nil: no audio section).
    public var audio: MediaDirection?
    public var videoTrack: LocalTrack?
    public var audioTrack: LocalTrack?

    public init(
        capabilities: CodecCapabilities = .sharectl, transport: LocalTransport, origin: Origin,
        video: MediaDirection? = .sendonly, audio: MediaDirection? = .sendonly,
        videoTrack: LocalTrack? = nil, audioTrack: LocalTrack? = nil
    ) {
        self.capabilities = capabilities
        self.transport = transport
        self.origin = origin
        self.video = video
        self.audio = audio
        self.videoTrack = videoTrack
        self.audioTrack = audioTrack
    }

    /// Header extension ids this offer uses.
    static let extensionIDs: [String: UInt16] = [
        ExtensionMap.sdesMid: 1, ExtensionMap.absSendTime: 2, ExtensionMap.transportWideCC: 3,
        ExtensionMap.rtpStreamID: 4, ExtensionMap.repairedRTPStreamID: 5
    ]

    public func offer() -> SessionDescription {
        var sections: [MediaDescription] = []
        var streams: [String] = []
        let plan: [(MediaKind, MediaDirection?, LocalTrack?)] = [
            (.video, video, videoTrack), (.audio, audio, audioTrack)
        ]
        for (kind, direction, track) in plan {
            guard let direction else { continue }
            let payloads = kind == .video ? videoPayloads() : audioPayloads()
            guard !payloads.isEmpty else { continue }
            let simulcast = direction.sends && (track?.rids.count ?? 0) > 1
            let uris =
                capabilities.headerExtensions
                + (simulcast ? [ExtensionMap.rtpStreamID, ExtensionMap.repairedRTPStreamID] : [])
            var section = MediaDescription(
                kind: kind, formats: payloads.map { String($0.payloadType) }, mid: String(sections.count),
                extensions: uris.compactMap { uri in
                    OfferBuilder.extensionIDs[uri].map { ExtensionMap(id: $0, uri: uri) }
                },
                direction: direction, rtcpMux: true, rtcpReducedSize: true, payloads: payloads)
            section.applyLocalTransport(transport, carriesCandidates: sections.isEmpty)
            if direction.sends, let track {
                section.applyLocalTrack(track, rtx: payloads.contains { $0.associatedPayloadType != nil })
                if !streams.contains(track.streamID) { streams.append(track.streamID) }
            }
            sections.append(section)
        }
        return SessionDescription(
            origin: origin, groups: [.bundle(sections.compactMap(\.mid))],
            msidSemantic: MSIDSemantic(identifiers: streams), media: sections)
    }

    private func videoPayloads() -> [PayloadFormat] {
        var payloads: [PayloadFormat] = []
        var next: UInt8 = 96
        for codec in capabilities.videoCodecs where codec.kind == .video {
            var parameters: [FormatParameter]?
            if codec == .h264 {
                guard let profile = capabilities.h264Profiles.first,
                    let id = OfferBuilder.profileLevelID(for: profile)
                else { continue }
                parameters = [
                    FormatParameter("level-asymmetry-allowed", "1"),
                    FormatParameter("packetization-mode", "1"),
                    FormatParameter("profile-level-id", id.hex)
                ]
            }
            let primary = next
            payloads.append(
                PayloadFormat(
                    payloadType: primary,
                    rtpMap: RTPMap(encodingName: codec.rawValue, clockRate: codec.clockRate),
                    parameters: parameters, feedback: capabilities.videoFeedback))
            next += 1
            if capabilities.rtx {
                payloads.append(
                    PayloadFormat(
                        payloadType: next, rtpMap: RTPMap(encodingName: "rtx", clockRate: 90_000),
                        parameters: [FormatParameter("apt", String(primary))]))
                next += 1
            }
        }
        return payloads
    }

    private func audioPayloads() -> [PayloadFormat] {
        guard capabilities.audioCodecs.contains(.opus) else { return [] }
        return [
            PayloadFormat(
                payloadType: 111, rtpMap: RTPMap(encodingName: "opus", clockRate: 48_000, channels: 2),
                parameters: capabilities.opusParameters, feedback: capabilities.audioFeedback)
        ]
    }

    /// The level 3.1 `profile-level-id` we offer for a profile we can send.
    static func profileLevelID(for profile: H264Profile) -> H264ProfileLevelID? {
        switch profile {
        case .constrainedBaseline: return .constrainedBaseline31
        case .main: return .main31
        case .baseline: return H264ProfileLevelID(profileIDC: 0x42, constraintFlags: 0x00, levelIDC: 0x1F)
        default: return nil
        }
    }
}
