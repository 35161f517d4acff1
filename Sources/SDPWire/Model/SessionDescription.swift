/// A whole session description: the session part and its media sections, in order.
///
///     let offer = try SessionDescription.parse(text)   // LF or CRLF
///     let text = offer.serialize()                      // CRLF
public struct SessionDescription: Hashable, Sendable {
    public var origin: Origin
    /// `s=`; JSEP writes `-`.
    public var sessionName: String
    public var connection: ConnectionData?
    public var bandwidths: [Bandwidth]
    public var timing: Timing
    /// `i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=` and any further `t=`, kept as written.
    public var extraLines: [SDPLine]

    /// `a=group:…`; `bundleGroup` is the BUNDLE one.
    public var groups: [MediaGroup]
    public var extmapAllowMixed: Bool
    public var msidSemantic: MSIDSemantic?
    /// `a=ice-lite`: the peer only answers checks (many SFUs).
    public var iceLite: Bool
    /// ICE and DTLS attributes given once for all sections (Firefox, some servers).
    public var transport: TransportAttributes
    /// Session-level `a=extmap` (RFC 8285 allows it; rare).
    public var extensions: [ExtensionMap]
    /// Session-level direction, the default for every section without its own.
    public var direction: MediaDirection?
    /// Session-level `a=end-of-candidates` (RFC 8840).
    public var endOfCandidates: Bool
    /// Session attributes not modelled above, in order.
    public var attributes: [SDPAttribute]

    public var media: [MediaDescription]

    public init(
        origin: Origin, sessionName: String = "-", connection: ConnectionData? = nil,
        bandwidths: [Bandwidth] = [], timing: Timing = Timing(), extraLines: [SDPLine] = [],
        groups: [MediaGroup] = [], extmapAllowMixed: Bool = false, msidSemantic: MSIDSemantic? = nil,
        iceLite: Bool = false, transport: TransportAttributes = TransportAttributes(),
        extensions: [ExtensionMap] = [], direction: MediaDirection? = nil, endOfCandidates: Bool = false,
        attributes: [SDPAttribute] = [], media: [MediaDescription] = []
    ) {
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.extraLines = extraLines
        self.groups = groups
        self.extmapAllowMixed = extmapAllowMixed
        self.msidSemantic = msidSemantic
        self.iceLite = iceLite
        self.transport = transport
        self.extensions = extensions
        self.direction = direction
        self.endOfCandidates = endOfCandidates
        self.attributes = attributes
        self.media = media
    }

    /// The first `a=group:BUNDLE`, if any.
    public var bundleGroup: MediaGroup? { groups.first(where: { $0.semantics == "BUNDLE" }) }

    /// The media section with `a=mid:<mid>`.
    public func media(mid: String) -> MediaDescription? { media.first(where: { $0.mid == mid }) }

    /// A section's ICE and DTLS attributes, with what it lacks taken from the session level.
    public func transport(for media: MediaDescription) -> TransportAttributes {
        media.transport.filled(from: transport)
    }

    /// A section's direction: its own, else the session's, else `sendrecv` (RFC 8866 §6.7).
    public func direction(of media: MediaDescription) -> MediaDirection {
        media.direction ?? direction ?? .sendrecv
    }
}
