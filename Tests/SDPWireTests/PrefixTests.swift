@testable import SDPWire
import Testing

/// Descriptions cut short at every byte: each prefix parses or throws an SDPError, never crashes,
/// and whatever parses is a fixed point of serialize → parse.
@Suite struct PrefixTests {
    /// A compact description with one of every line and attribute kind the parser models.
    static let everyKind = """
        v=0\r
        o=- 4611731400430051336 2 IN IP4 127.0.0.1\r
        s=-\r
        i=info\r
        c=IN IP4 0.0.0.0\r
        b=AS:2000\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        a=extmap-allow-mixed\r
        a=msid-semantic: WMS s\r
        a=ice-lite\r
        a=ice-options:trickle renomination\r
        a=fingerprint:sha-1 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33\r
        a=extmap:5 urn:x\r
        a=sendrecv\r
        a=x-session:1\r
        m=video 9 UDP/TLS/RTP/SAVPF 96 97\r
        c=IN IP4 0.0.0.0\r
        a=rtcp:9 IN IP4 0.0.0.0\r
        a=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host raddr 0.0.0.0 rport 0 tcptype so generation 0 ufrag u network-id 1 network-cost 10 x y\r
        a=end-of-candidates\r
        a=ice-ufrag:u\r
        a=ice-pwd:p0123456789012345678901\r
        a=setup:actpass\r
        a=mid:0\r
        a=bundle-only\r
        a=extmap:2/sendonly http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
        a=sendonly\r
        a=msid:s t\r
        a=rtcp-mux\r
        a=rtcp-mux-only\r
        a=rtcp-rsize\r
        a=rtcp-fb:* nack\r
        a=rtpmap:96 H264/90000\r
        a=rtcp-fb:96 nack pli\r
        a=fmtp:96 packetization-mode=1;profile-level-id=42e01f\r
        a=rtpmap:97 rtx/90000\r
        a=fmtp:97 apt=96\r
        a=ssrc-group:FID 1 2\r
        a=ssrc:1 cname:c\r
        a=ssrc:2 msid:s t\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        a=mid:1\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r
        a=sctp-port:5000\r

        """

    private func everyPrefix(of text: String) throws -> Int {
        let bytes = Array(text.utf8)
        var parsedCount = 0
        for end in 0...bytes.count {
            let prefix = String(decoding: bytes[..<end], as: UTF8.self)
            guard let description = try? SessionDescription.parse(prefix) else { continue }
            parsedCount += 1
            if end % 53 == 0 || end == bytes.count { try expectFixedPoint(description) }
        }
        return parsedCount
    }

    @Test func everyPrefixOfEveryKind() throws {
        let description = try SessionDescription.parse(PrefixTests.everyKind)
        #expect(description.serialize() == PrefixTests.everyKind, "already in writing order")
        #expect(try everyPrefix(of: PrefixTests.everyKind) > 0)
    }

    /// Every byte of a whole Chromium offer (the smallest; every fixture below line by line).
    @Test func everyPrefixOfAChromiumOffer() throws {
        #expect(try everyPrefix(of: try fixture("chromium-offer-no-h264.sdp")) > 0)
    }

    /// Each fixture cut after every line, and each of its lines cut at every byte inside its own
    /// session head and media section: the same cuts as every prefix, without the quadratic cost.
    @Test(arguments: chromiumFixtures)
    func everyLineCutAtEveryByte(name: String) throws {
        let lines = try fixture(name).split(separator: "\r\n").map(String.init)
        var context = ""
        for (index, line) in lines.enumerated() {
            let whole = lines[...index].joined(separator: "\r\n") + "\r\n"
            if let description = try? SessionDescription.parse(whole) { try expectFixedPoint(description) }
            if line.hasPrefix("m=") { context = "" }
            let head = index < 4 ? "" : lines[..<4].joined(separator: "\r\n") + "\r\n"
            let scalars = Array(line.unicodeScalars)
            for end in 0...scalars.count {
                let cut = String(String.UnicodeScalarView(scalars[..<end]))
                _ = try? SessionDescription.parse(head + context + cut)
            }
            if line.hasPrefix("m=") { context = line + "\r\n" }
        }
    }

    @Test func everyCandidatePrefix() throws {
        let line =
            "candidate:842163049 1 udp 1677729535 203.0.113.7 61665 typ srflx raddr 192.168.1.4 rport 61665 generation 0 ufrag EsAw network-id 3"
        let scalars = Array(line.unicodeScalars)
        for end in 0...scalars.count {
            let text = String(String.UnicodeScalarView(scalars[..<end]))
            if let candidate = try? ICECandidate(parsing: text) {
                #expect(try ICECandidate(parsing: candidate.candidateString) == candidate)
            }
        }
    }
}
