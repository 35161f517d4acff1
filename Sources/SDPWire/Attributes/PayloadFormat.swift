// What one RTP payload type means: a=rtpmap (RFC 8866 §6.6), a=fmtp (§6.15), a=rtcp-fb (RFC 4585 §4.2).

/// `a=rtpmap:<pt> <encoding name>/<clock rate>[/<channels>]`, e.g. `opus/48000/2`.
public struct RTPMap: Hashable, Sendable {
    /// As written (`H264`, `VP8`, `opus`, `rtx`); compare case-insensitively.
    public var encodingName: String
    public var clockRate: UInt32
    /// Audio channels; nil when the line has no third part.
    public var channels: UInt16?

    public init(encodingName: String, clockRate: UInt32, channels: UInt16? = nil) {
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = value.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map(Substring.init)
        guard parts.count == 2 || parts.count == 3, isToken(parts[0]) else {
            throw SDPError(reason: "a=rtpmap needs <encoding name>/<clock rate>[/<channels>]")
        }
        encodingName = String(parts[0])
        clockRate = try decimal(parts[1], "a=rtpmap clock rate")
        channels = parts.count == 3 ? try decimal(parts[2], "a=rtpmap channels") : nil
    }

    var sdpValue: String {
        "\(encodingName)/\(clockRate)" + (channels.map { "/\($0)" } ?? "")
    }

    /// True when the encoding names match, ignoring case.
    public func isEncoding(_ name: String) -> Bool { encodingName.lowercased() == name.lowercased() }
}

/// One `name=value` of an `a=fmtp` line (`;`-separated). Some formats use bare values, e.g.
/// RED's `111/111`, which become a parameter with no value.
public struct FormatParameter: Hashable, Sendable {
    public var name: String
    public var value: String?

    public init(_ name: String, _ value: String?) {
        self.name = name
        self.value = value
    }

    static func parseList(_ text: Substring) -> [FormatParameter] {
        text.unicodeScalars.split(separator: ";").compactMap { piece in
            let item = trimmed(Substring(piece))
            guard !item.isEmpty else { return nil }
            let (name, value) = splitOnce(item, at: "=")
            return FormatParameter(String(trimmed(name)), value.map { String(trimmed($0)) })
        }
    }

    var sdpValue: String { value.map { "\(name)=\($0)" } ?? name }
}

/// One `a=rtcp-fb` capability, e.g. `nack`, `nack pli`, `ccm fir`, `goog-remb`, `transport-cc`.
public struct RTCPFeedback: Hashable, Sendable {
    public var type: String
    /// What follows the type (`pli` in `nack pli`), or nil.
    public var parameter: String?

    public init(_ type: String, _ parameter: String? = nil) {
        self.type = type
        self.parameter = parameter
    }

    public static let nack = RTCPFeedback("nack")
    public static let pli = RTCPFeedback("nack", "pli")
    public static let fir = RTCPFeedback("ccm", "fir")
    public static let remb = RTCPFeedback("goog-remb")
    public static let transportCC = RTCPFeedback("transport-cc")

    init(fields parts: ArraySlice<Substring>) throws(SDPError) {
        guard let first = parts.first else { throw SDPError(reason: "a=rtcp-fb needs a feedback type") }
        type = String(first)
        parameter = parts.count > 1 ? parts.dropFirst().joined(separator: " ") : nil
    }

    var sdpValue: String { parameter.map { "\(type) \($0)" } ?? type }
}

/// Everything the attributes of a media section say about one payload type. A payload type in
/// the m= line with no attribute at all (a static type such as 0 for PCMU) has no entry.
public struct PayloadFormat: Hashable, Sendable {
    public var payloadType: UInt8
    /// From `a=rtpmap`; nil when the section has none for this type.
    public var rtpMap: RTPMap?
    /// From `a=fmtp`, in order; nil when there is no `a=fmtp` line.
    public var parameters: [FormatParameter]?
    /// From `a=rtcp-fb:<pt>`, in order.
    public var feedback: [RTCPFeedback]

    public init(
        payloadType: UInt8, rtpMap: RTPMap? = nil, parameters: [FormatParameter]? = nil,
        feedback: [RTCPFeedback] = []
    ) {
        self.payloadType = payloadType
        self.rtpMap = rtpMap
        self.parameters = parameters
        self.feedback = feedback
    }

    /// The value of an fmtp parameter (`packetization-mode`, `apt`, …), names compared as written.
    public func parameter(_ name: String) -> String? {
        parameters?.first(where: { $0.name == name })?.value
    }

    /// For an RTX payload type (`rtx/…` with `apt=`), the payload type it repairs.
    public var associatedPayloadType: UInt8? {
        guard rtpMap?.isEncoding("rtx") == true, let apt = parameter("apt"), let value = UInt8(apt),
            value <= 127
        else { return nil }
        return value
    }

    var sdpLines: [String] {
        var lines: [String] = []
        if let rtpMap { lines.append("a=rtpmap:\(payloadType) \(rtpMap.sdpValue)") }
        for item in feedback { lines.append("a=rtcp-fb:\(payloadType) \(item.sdpValue)") }
        if let parameters {
            let list = parameters.map(\.sdpValue).joined(separator: ";")
            lines.append(list.isEmpty ? "a=fmtp:\(payloadType)" : "a=fmtp:\(payloadType) \(list)")
        }
        return lines
    }
}
