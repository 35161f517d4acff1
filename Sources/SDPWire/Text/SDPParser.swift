extension SessionDescription {
    /// Reads a session description. Lines may end in CRLF or LF; blank lines are skipped.
    /// Throws an `SDPError` naming the line and what is wrong with it.
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        var parser = SDPParser()
        return try parser.parse(text)
    }
}

/// Reads lines one at a time into the session and the media section being built.
struct SDPParser {
    private var origin: Origin?
    private var sessionName: String?
    private var timing: Timing?
    private var session = SessionDescription(origin: Origin(sessionID: "0", sessionVersion: 0))
    private var current: MediaBuilder?
    private var significantLines = 0

    mutating func parse(_ text: String) throws(SDPError) -> SessionDescription {
        let bytes = Array(text.utf8)
        var lineNumber = 0
        var start = 0
        while start <= bytes.count {
            // One line: up to LF or the end, without the CR of a CRLF.
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            let next = end + 1
            lineNumber += 1
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            defer { start = next }
            if end == start { continue }
            let content = bytes[start..<end]
            let line = String(decoding: content, as: UTF8.self)
            do throws(SDPError) {
                if content.contains(0x0D) { throw SDPError(reason: "line has a carriage return inside it") }
                if content.contains(0x00) { throw SDPError(reason: "line has a NUL byte") }
                try read(line: line)
            } catch {
                throw error.at(line: lineNumber, text: line)
            }
        }
        guard significantLines > 0 else { throw SDPError(reason: "empty description (no v= line)") }
        guard let origin, let sessionName else { throw SDPError(reason: "description ends before its o= and s= lines") }
        guard let timing else { throw SDPError(reason: "missing t= line") }
        try finishMedia()
        session.origin = origin
        session.sessionName = sessionName
        session.timing = timing
        session.extraLines = ordered(session.extraLines, early: ["i", "u", "e", "p"])
        return session
    }

    private mutating func read(line: String) throws(SDPError) {
        let scalars = line.unicodeScalars
        guard let type = scalars.first, ("a"..."z").contains(type), scalars.dropFirst().first == "=" else {
            throw SDPError(reason: "line must look like <letter>=<value>")
        }
        let value = Substring(scalars.dropFirst(2))
        significantLines += 1
        switch significantLines {
        case 1:
            guard type == "v" else { throw SDPError(reason: "description must start with v=0") }
            guard trimmed(value) == "0" else { throw SDPError(reason: "SDP version must be 0") }
            return
        case 2:
            guard type == "o" else { throw SDPError(reason: "o= line must follow v=") }
            origin = try Origin(sdpValue: value)
            return
        case 3:
            guard type == "s" else { throw SDPError(reason: "s= line must follow o=") }
            sessionName = String(value)
            return
        default:
            break
        }
        if type == "m" {
            guard timing != nil else { throw SDPError(reason: "t= line must come before the first m= line") }
            try finishMedia()
            current = MediaBuilder(media: try mediaLine(value))
            return
        }
        if current != nil {
            try readMediaLine(type: type, value: value)
        } else {
            try readSessionLine(type: type, value: value)
        }
    }

    // MARK: Session level

    private mutating func readSessionLine(type: Unicode.Scalar, value: Substring) throws(SDPError) {
        switch type {
        case "v", "o", "s":
            throw SDPError(reason: "\(type)= line may appear only once, at the start")
        case "c":
            guard session.connection == nil else { throw SDPError(reason: "more than one session c= line") }
            session.connection = try ConnectionData(sdpValue: value)
        case "b":
            session.bandwidths.append(try Bandwidth(sdpValue: value))
        case "t":
            if timing == nil {
                timing = try Timing(sdpValue: value)
            } else {
                session.extraLines.append(SDPLine(type: type, value: String(value)))
            }
        case "i", "u", "e", "p", "r", "z", "k":
            session.extraLines.append(SDPLine(type: type, value: String(value)))
        case "a":
            try readSessionAttribute(value)
        default:
            throw SDPError(reason: "unknown line type '\(type)'")
        }
    }

    private mutating func readSessionAttribute(_ text: Substring) throws(SDPError) {
        let (name, value) = try attribute(text)
        if try session.transport.read(name: name, value: value) { return }
        switch name {
        case "group":
            session.groups.append(try MediaGroup(sdpValue: try requiredValue(name, value)))
        case "extmap-allow-mixed":
            try noValue(name, value)
            session.extmapAllowMixed = true
        case "msid-semantic":
            guard session.msidSemantic == nil else { throw SDPError(reason: "more than one a=msid-semantic") }
            session.msidSemantic = try MSIDSemantic(sdpValue: try requiredValue(name, value))
        case "ice-lite":
            try noValue(name, value)
            session.iceLite = true
        case "extmap":
            session.extensions.append(try ExtensionMap(sdpValue: try requiredValue(name, value)))
        case "end-of-candidates":
            try noValue(name, value)
            session.endOfCandidates = true
        case "sendrecv", "sendonly", "recvonly", "inactive":
            try noValue(name, value)
            guard session.direction == nil else { throw SDPError(reason: "more than one direction attribute") }
            session.direction = MediaDirection(rawValue: name)
        case "mid", "rtpmap", "fmtp", "rtcp-fb", "ssrc", "ssrc-group", "msid", "rtcp", "rtcp-mux",
            "rtcp-mux-only", "rtcp-rsize", "candidate", "bundle-only":
            throw SDPError(reason: "a=\(name) must be in a media section (after an m= line)")
        default:
            session.attributes.append(SDPAttribute(name: name, value: value.map(String.init)))
        }
    }

    // MARK: Media level

    private func mediaLine(_ value: Substring) throws(SDPError) -> MediaDescription {
        let parts = fields(value)
        guard parts.count >= 4 else { throw SDPError(reason: "m= line needs at least 4 fields") }
        let (portText, countText) = splitOnce(parts[1], at: "/")
        return MediaDescription(
            kind: MediaKind(rawValue: String(parts[0])),
            port: try decimal(portText, "m= port"),
            portCount: try countText.map { (text) throws(SDPError) -> UInt16 in try decimal(text, "m= port count") },
            proto: String(parts[2]),
            formats: parts.dropFirst(3).map(String.init))
    }

    private mutating func readMediaLine(type: Unicode.Scalar, value: Substring) throws(SDPError) {
        guard var builder = current else { return }
        defer { current = builder }
        switch type {
        case "c":
            guard builder.media.connection == nil else {
                throw SDPError(reason: "more than one c= line in a media section")
            }
            builder.media.connection = try ConnectionData(sdpValue: value)
        case "b":
            builder.media.bandwidths.append(try Bandwidth(sdpValue: value))
        case "i", "k":
            builder.media.extraLines.append(SDPLine(type: type, value: String(value)))
        case "a":
            try builder.readAttribute(value)
        case "v", "o", "s", "t", "u", "e", "p", "r", "z":
            throw SDPError(reason: "\(type)= line is not allowed in a media section")
        default:
            throw SDPError(reason: "unknown line type '\(type)'")
        }
    }

    private mutating func finishMedia() throws(SDPError) {
        guard let builder = current else { return }
        session.media.append(builder.finished())
        current = nil
    }
}

/// One media section as its attributes arrive.
private struct MediaBuilder {
    var media: MediaDescription
    /// The order each payload type was first mentioned in an attribute.
    private var mentionOrder: [UInt8: Int] = [:]

    init(media: MediaDescription) { self.media = media }

    mutating func readAttribute(_ text: Substring) throws(SDPError) {
        let (name, value) = try attribute(text)
        if try media.transport.read(name: name, value: value) { return }
        switch name {
        case "mid":
            guard media.mid == nil else { throw SDPError(reason: "more than one a=mid") }
            media.mid = String(try requiredValue(name, value))
        case "bundle-only":
            try noValue(name, value)
            media.bundleOnly = true
        case "extmap":
            media.extensions.append(try ExtensionMap(sdpValue: try requiredValue(name, value)))
        case "sendrecv", "sendonly", "recvonly", "inactive":
            try noValue(name, value)
            guard media.direction == nil else { throw SDPError(reason: "more than one direction attribute") }
            media.direction = MediaDirection(rawValue: name)
        case "msid":
            media.msids.append(try MediaStreamID(sdpValue: try requiredValue(name, value)))
        case "rtcp-mux":
            try noValue(name, value)
            media.rtcpMux = true
        case "rtcp-mux-only":
            try noValue(name, value)
            media.rtcpMuxOnly = true
        case "rtcp-rsize":
            try noValue(name, value)
            media.rtcpReducedSize = true
        case "rtcp":
            guard media.rtcp == nil else { throw SDPError(reason: "more than one a=rtcp") }
            media.rtcp = try RTCPAddress(sdpValue: try requiredValue(name, value))
        case "candidate":
            media.candidates.append(try ICECandidate(sdpValue: try requiredValue(name, value)))
        case "end-of-candidates":
            try noValue(name, value)
            media.endOfCandidates = true
        case "rtpmap", "fmtp", "rtcp-fb":
            try readPayloadAttribute(name, try requiredValue(name, value))
        case "ssrc":
            media.ssrcs.append(try SSRCAttribute(sdpValue: try requiredValue(name, value)))
        case "ssrc-group":
            media.ssrcGroups.append(try SSRCGroup(sdpValue: try requiredValue(name, value)))
        default:
            media.attributes.append(SDPAttribute(name: name, value: value.map(String.init)))
        }
    }

    private mutating func readPayloadAttribute(_ name: String, _ value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard let typeText = parts.first else { throw SDPError(reason: "a=\(name) needs a payload type") }
        if name == "rtcp-fb", typeText == "*" {
            media.feedbackForAllPayloads.append(try RTCPFeedback(fields: parts.dropFirst()))
            return
        }
        let type = try payloadType(typeText)
        let index = payloadIndex(type)
        switch name {
        case "rtpmap":
            guard media.payloads[index].rtpMap == nil else {
                throw SDPError(reason: "more than one a=rtpmap for payload type \(type)")
            }
            guard parts.count == 2 else {
                throw SDPError(reason: "a=rtpmap needs <payload type> <encoding name>/<clock rate>[/<channels>]")
            }
            media.payloads[index].rtpMap = try RTPMap(sdpValue: parts[1])
        case "fmtp":
            guard media.payloads[index].parameters == nil else {
                throw SDPError(reason: "more than one a=fmtp for payload type \(type)")
            }
            let rest = trimmed(Substring(value.unicodeScalars.drop(while: { $0 != " " && $0 != "\t" })))
            media.payloads[index].parameters = FormatParameter.parseList(rest)
        default:
            media.payloads[index].feedback.append(try RTCPFeedback(fields: parts.dropFirst()))
        }
    }

    private mutating func payloadIndex(_ type: UInt8) -> Int {
        if let index = media.payloads.firstIndex(where: { $0.payloadType == type }) { return index }
        mentionOrder[type] = mentionOrder.count
        media.payloads.append(PayloadFormat(payloadType: type))
        return media.payloads.count - 1
    }

    /// The section with its payload types in m= line order, then those the m= line lacks in the
    /// order they were mentioned, and its extra lines in writing order.
    func finished() -> MediaDescription {
        var result = media
        var position: [UInt8: Int] = [:]
        for (index, type) in media.formats.enumerated() {
            if let number = UInt8(type), number <= 127, position[number] == nil { position[number] = index }
        }
        result.payloads = media.payloads.sorted { a, b in
            let keyA = (position[a.payloadType] ?? Int.max, mentionOrder[a.payloadType] ?? 0)
            let keyB = (position[b.payloadType] ?? Int.max, mentionOrder[b.payloadType] ?? 0)
            return keyA < keyB
        }
        result.extraLines = ordered(media.extraLines, early: ["i"])
        return result
    }
}

/// Splits `a=` content into a name and the value after the first colon.
private func attribute(_ text: Substring) throws(SDPError) -> (name: String, value: Substring?) {
    let (name, value) = splitOnce(text, at: ":")
    guard isToken(name) else { throw SDPError(reason: "attribute needs a name") }
    return (String(name), value)
}

private func noValue(_ name: String, _ value: Substring?) throws(SDPError) {
    guard value == nil else { throw SDPError(reason: "a=\(name) takes no value") }
}

/// Extra lines in the order the writer puts them: the `early` types first, each group as read.
private func ordered(_ lines: [SDPLine], early: Set<Unicode.Scalar>) -> [SDPLine] {
    lines.filter { early.contains($0.type) } + lines.filter { !early.contains($0.type) }
}
