extension SessionDescription {
    /// Writes the description with CRLF line ends, in the order Chromium uses: ICE and DTLS,
    /// mid, extensions, direction, msid, RTCP flags, unmodelled attributes, then each payload
    /// type's rtpmap, rtcp-fb and fmtp, then SSRCs.
    public func serialize() -> String {
        var lines = ["v=0", "o=\(origin.sdpValue)", "s=\(sessionName)"]
        let early: Set<Unicode.Scalar> = ["i", "u", "e", "p"]
        lines += extraLines.filter { early.contains($0.type) }.map(\.sdpLine)
        if let connection { lines.append("c=\(connection.sdpValue)") }
        lines += bandwidths.map { "b=\($0.sdpValue)" }
        lines.append("t=\(timing.sdpValue)")
        lines += extraLines.filter { !early.contains($0.type) }.map(\.sdpLine)

        lines += groups.map { "a=group:\($0.sdpValue)" }
        if extmapAllowMixed { lines.append("a=extmap-allow-mixed") }
        if let msidSemantic { lines.append("a=msid-semantic:\(msidSemantic.sdpValue)") }
        if iceLite { lines.append("a=ice-lite") }
        lines += transport.sdpLines
        lines += extensions.map { "a=extmap:\($0.sdpValue)" }
        if let direction { lines.append("a=\(direction.rawValue)") }
        if endOfCandidates { lines.append("a=end-of-candidates") }
        lines += attributes.map(\.sdpLine)

        for section in media { lines += section.sdpLines }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

extension MediaDescription {
    /// The section's lines, from its m= line on.
    var sdpLines: [String] {
        let port = portCount.map { "\(self.port)/\($0)" } ?? String(self.port)
        var lines = ["m=" + ([kind.rawValue, port, proto] + formats).joined(separator: " ")]
        lines += extraLines.filter { $0.type == "i" }.map(\.sdpLine)
        if let connection { lines.append("c=\(connection.sdpValue)") }
        lines += bandwidths.map { "b=\($0.sdpValue)" }
        lines += extraLines.filter { $0.type != "i" }.map(\.sdpLine)

        if let rtcp { lines.append("a=rtcp:\(rtcp.sdpValue)") }
        lines += candidates.map { "a=candidate:\($0.sdpValue)" }
        if endOfCandidates { lines.append("a=end-of-candidates") }
        lines += transport.sdpLines
        if let mid { lines.append("a=mid:\(mid)") }
        if bundleOnly { lines.append("a=bundle-only") }
        lines += extensions.map { "a=extmap:\($0.sdpValue)" }
        if let direction { lines.append("a=\(direction.rawValue)") }
        lines += msids.map { "a=msid:\($0.sdpValue)" }
        if rtcpMux { lines.append("a=rtcp-mux") }
        if rtcpMuxOnly { lines.append("a=rtcp-mux-only") }
        if rtcpReducedSize { lines.append("a=rtcp-rsize") }
        lines += attributes.map(\.sdpLine)
        lines += feedbackForAllPayloads.map { "a=rtcp-fb:* \($0.sdpValue)" }
        for payload in payloads { lines += payload.sdpLines }
        lines += ssrcGroups.map { "a=ssrc-group:\($0.sdpValue)" }
        lines += ssrcs.map { "a=ssrc:\($0.sdpValue)" }
        return lines
    }
}

extension SDPLine {
    var sdpLine: String { "\(Character(type))=\(value)" }
}
