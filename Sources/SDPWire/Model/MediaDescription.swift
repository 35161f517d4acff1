/// The media type of an m= line: `audio`, `video`, `application`, or anything else as written.
public struct MediaKind: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public static let audio: MediaKind = "audio"
    public static let video: MediaKind = "video"
    /// Data channels (`UDP/DTLS/SCTP webrtc-datachannel`).
    public static let application: MediaKind = "application"
}

/// One media section: the m= line (RFC 8866 §5.14) and everything up to the next one.
public struct MediaDescription: Hashable, Sendable {
    // MARK: m=, c=, b=
    public var kind: MediaKind
    /// 0 rejects the section (unless it is `a=bundle-only`). JSEP writes 9 before candidates.
    public var port: UInt16
    /// The `/<number of ports>` after the port, rarely present.
    public var portCount: UInt16?
    /// `UDP/TLS/RTP/SAVPF` for WebRTC media, `UDP/DTLS/SCTP` for data channels.
    public var proto: String
    /// The m= line's formats as written: RTP payload types, or e.g. `webrtc-datachannel`.
    public var formats: [String]
    public var connection: ConnectionData?
    public var bandwidths: [Bandwidth]
    /// `i=` and `k=` lines, kept as written.
    public var extraLines: [SDPLine]

    // MARK: Transport
    public var rtcp: RTCPAddress?
    public var candidates: [ICECandidate]
    public var endOfCandidates: Bool
    public var transport: TransportAttributes

    // MARK: Identity and RTP
    public var mid: String?
    public var bundleOnly: Bool
    public var extensions: [ExtensionMap]
    public var direction: MediaDirection?
    public var msids: [MediaStreamID]
    public var rtcpMux: Bool
    public var rtcpMuxOnly: Bool
    public var rtcpReducedSize: Bool
    /// `a=rtcp-fb:* …`: feedback for every payload type.
    public var feedbackForAllPayloads: [RTCPFeedback]
    /// Per payload type, in m= line order (then any the m= line does not list).
    public var payloads: [PayloadFormat]
    public var ssrcGroups: [SSRCGroup]
    public var ssrcs: [SSRCAttribute]

    /// Attributes not modelled above, in order.
    public var attributes: [SDPAttribute]

    public init(
        kind: MediaKind, port: UInt16 = 9, portCount: UInt16? = nil, proto: String = "UDP/TLS/RTP/SAVPF",
        formats: [String] = [], connection: ConnectionData? = nil, bandwidths: [Bandwidth] = [],
        extraLines: [SDPLine] = [], rtcp: RTCPAddress? = nil, candidates: [ICECandidate] = [],
        endOfCandidates: Bool = false, transport: TransportAttributes = TransportAttributes(),
        mid: String? = nil, bundleOnly: Bool = false, extensions: [ExtensionMap] = [],
        direction: MediaDirection? = nil, msids: [MediaStreamID] = [], rtcpMux: Bool = false,
        rtcpMuxOnly: Bool = false, rtcpReducedSize: Bool = false,
        feedbackForAllPayloads: [RTCPFeedback] = [], payloads: [PayloadFormat] = [],
        ssrcGroups: [SSRCGroup] = [], ssrcs: [SSRCAttribute] = [], attributes: [SDPAttribute] = []
    ) {
        self.kind = kind
        self.port = port
        self.portCount = portCount
        self.proto = proto
        self.formats = formats
        self.connection = connection
        self.bandwidths = bandwidths
        self.extraLines = extraLines
        self.rtcp = rtcp
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
        self.transport = transport
        self.mid = mid
        self.bundleOnly = bundleOnly
        self.extensions = extensions
        self.direction = direction
        self.msids = msids
        self.rtcpMux = rtcpMux
        self.rtcpMuxOnly = rtcpMuxOnly
        self.rtcpReducedSize = rtcpReducedSize
        self.feedbackForAllPayloads = feedbackForAllPayloads
        self.payloads = payloads
        self.ssrcGroups = ssrcGroups
        self.ssrcs = ssrcs
        self.attributes = attributes
    }

    /// Port 0 without `a=bundle-only`: the section was rejected or stopped.
    public var isRejected: Bool { port == 0 && !bundleOnly }

    /// True for RTP media (`…RTP/AVP`, `…RTP/SAVPF` …), false for data channels.
    public var isRTP: Bool { proto.contains("RTP/") }

    /// The attributes of one payload type.
    public func payload(_ payloadType: UInt8) -> PayloadFormat? {
        payloads.first(where: { $0.payloadType == payloadType })
    }

    /// The RTX payload type (`a=fmtp:<rtx> apt=<payloadType>`) repairing `payloadType`.
    public func rtxPayloadType(for payloadType: UInt8) -> UInt8? {
        payloads.first(where: { $0.associatedPayloadType == payloadType })?.payloadType
    }

    /// The m= line's formats read as RTP payload types, skipping any that are not numbers 0–127.
    public var payloadTypes: [UInt8] {
        formats.compactMap { UInt8($0) }.filter { $0 <= 127 }
    }

    /// The `cname` of the section's first SSRC that has one.
    public var cname: String? { ssrcs.first(where: { $0.name == "cname" })?.value }
}
