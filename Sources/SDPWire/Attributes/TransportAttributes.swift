/// An `a=ice-options` token (RFC 8839 §5.6), e.g. `trickle` or `renomination`. Unknown tokens are
/// kept as written.
public struct ICEOption: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    /// Candidates may arrive after the description (RFC 8838).
    public static let trickle: ICEOption = "trickle"
    /// The controlling side may change its nominated pair (draft-thatcher-ice-renomination).
    public static let renomination: ICEOption = "renomination"
}

/// The ICE and DTLS attributes that may sit at session level or in a media section:
/// `a=ice-ufrag`, `a=ice-pwd`, `a=ice-options`, `a=fingerprint`, `a=setup`.
/// Chromium repeats them in every media section.
public struct TransportAttributes: Hashable, Sendable {
    public var iceUfrag: String?
    public var icePwd: String?
    /// nil when there is no `a=ice-options` line.
    public var iceOptions: [ICEOption]?
    public var fingerprints: [Fingerprint]
    public var setup: DTLSSetup?

    public init(
        iceUfrag: String? = nil, icePwd: String? = nil, iceOptions: [ICEOption]? = nil,
        fingerprints: [Fingerprint] = [], setup: DTLSSetup? = nil
    ) {
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.iceOptions = iceOptions
        self.fingerprints = fingerprints
        self.setup = setup
    }

    public var isEmpty: Bool {
        iceUfrag == nil && icePwd == nil && iceOptions == nil && fingerprints.isEmpty && setup == nil
    }

    /// These attributes with anything missing taken from `fallback` (the session level).
    public func filled(from fallback: TransportAttributes) -> TransportAttributes {
        TransportAttributes(
            iceUfrag: iceUfrag ?? fallback.iceUfrag, icePwd: icePwd ?? fallback.icePwd,
            iceOptions: iceOptions ?? fallback.iceOptions,
            fingerprints: fingerprints.isEmpty ? fallback.fingerprints : fingerprints,
            setup: setup ?? fallback.setup)
    }

    /// Reads one of the five attributes into `self`; false when `name` is not one of them.
    mutating func read(name: String, value: Substring?) throws(SDPError) -> Bool {
        switch name {
        case "ice-ufrag":
            guard iceUfrag == nil else { throw SDPError(reason: "more than one a=ice-ufrag") }
            iceUfrag = String(try requiredValue(name, value))
        case "ice-pwd":
            guard icePwd == nil else { throw SDPError(reason: "more than one a=ice-pwd") }
            icePwd = String(try requiredValue(name, value))
        case "ice-options":
            guard iceOptions == nil else { throw SDPError(reason: "more than one a=ice-options") }
            let options = fields(try requiredValue(name, value)).map { ICEOption(rawValue: String($0)) }
            iceOptions = options
        case "fingerprint":
            fingerprints.append(try Fingerprint(sdpValue: try requiredValue(name, value)))
        case "setup":
            guard setup == nil else { throw SDPError(reason: "more than one a=setup") }
            setup = try DTLSSetup(sdpValue: try requiredValue(name, value))
        default:
            return false
        }
        return true
    }

    var sdpLines: [String] {
        var lines: [String] = []
        if let iceUfrag { lines.append("a=ice-ufrag:\(iceUfrag)") }
        if let icePwd { lines.append("a=ice-pwd:\(icePwd)") }
        // An empty list is no line at all: `a=ice-options:` with no token is not valid SDP.
        if let iceOptions, !iceOptions.isEmpty {
            lines.append("a=ice-options:" + iceOptions.map(\.rawValue).joined(separator: " "))
        }
        for fingerprint in fingerprints { lines.append("a=fingerprint:\(fingerprint.sdpValue)") }
        if let setup { lines.append("a=setup:\(setup.rawValue)") }
        return lines
    }
}

/// The trimmed value of an attribute that must have one.
func requiredValue(_ name: String, _ value: Substring?) throws(SDPError) -> Substring {
    guard let value else { throw SDPError(reason: "a=\(name) needs a value") }
    let trimmedValue = trimmed(value)
    guard !trimmedValue.isEmpty else { throw SDPError(reason: "a=\(name) needs a value") }
    return trimmedValue
}
