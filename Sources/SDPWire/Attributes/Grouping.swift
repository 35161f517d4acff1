// Grouping and stream identity: a=group (RFC 5888, RFC 9143 BUNDLE), a=msid-semantic (the WebRTC
// "WMS" line Chromium still writes), a=msid (RFC 8830).

/// `a=group:<semantics> <mid> ...`, e.g. `a=group:BUNDLE 0 1 2`. May name no mid at all.
public struct MediaGroup: Hashable, Sendable {
    public var semantics: String
    public var mids: [String]

    public init(semantics: String, mids: [String]) {
        self.semantics = semantics
        self.mids = mids
    }

    public static func bundle(_ mids: [String]) -> MediaGroup { MediaGroup(semantics: "BUNDLE", mids: mids) }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard let first = parts.first else { throw SDPError(reason: "a=group needs semantics, e.g. BUNDLE") }
        semantics = String(first)
        mids = parts.dropFirst().map(String.init)
    }

    var sdpValue: String { ([semantics] + mids).joined(separator: " ") }
}

/// `a=msid-semantic: WMS [<stream id> ...]`, written by Chromium with a space after the colon.
public struct MSIDSemantic: Hashable, Sendable {
    public var semantic: String
    public var identifiers: [String]

    public init(semantic: String = "WMS", identifiers: [String]) {
        self.semantic = semantic
        self.identifiers = identifiers
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard let first = parts.first else { throw SDPError(reason: "a=msid-semantic needs a semantic, e.g. WMS") }
        semantic = String(first)
        identifiers = parts.dropFirst().map(String.init)
    }

    var sdpValue: String { " " + ([semantic] + identifiers).joined(separator: " ") }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830): which MediaStream (and track) a section carries.
/// A stream id of `-` means "no stream".
public struct MediaStreamID: Hashable, Sendable {
    public var streamID: String
    public var trackID: String?

    public init(streamID: String, trackID: String? = nil) {
        self.streamID = streamID
        self.trackID = trackID
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard let first = parts.first else { throw SDPError(reason: "a=msid needs a stream id") }
        streamID = String(first)
        trackID = parts.count > 1 ? parts.dropFirst().joined(separator: " ") : nil
    }

    var sdpValue: String { trackID.map { "\(streamID) \($0)" } ?? streamID }
}
