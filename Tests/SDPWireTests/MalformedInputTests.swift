@testable import SDPWire
import Testing

/// Broken descriptions give an error naming the line, what is wrong, and the line itself.
@Suite struct MalformedInputTests {
    private let head = "v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\nt=0 0\n"

    @Test func messageShape() {
        let text = head + "m=audio 9 UDP/TLS/RTP/SAVPF 111\na=mid:0\nm=video 9\n"
        #expect(parseError(text) == "sdp: line 7: m= line needs at least 4 fields: \"m=video 9\"")
        let error = SDPError(line: 7, text: "m=video 9", reason: "m= line needs at least 4 fields")
        #expect(throws: error) { try SessionDescription.parse(text) }
    }

    @Test func table() {
        let table: [(text: String, error: String)] = [
            ("", "sdp: empty description (no v= line)"),
            ("\r\n\n", "sdp: empty description (no v= line)"),
            (
                "o=- 1 2 IN IP4 127.0.0.1\ns=-\nt=0 0\n",  // missing v=
                "sdp: line 1: description must start with v=0: \"o=- 1 2 IN IP4 127.0.0.1\""
            ),
            ("v=1\n", "sdp: line 1: SDP version must be 0: \"v=1\""),
            ("v=0\ns=-\n", "sdp: line 2: o= line must follow v=: \"s=-\""),
            (
                "v=0\no=- 1 2 IN IP4\n",
                "sdp: line 2: o= line needs 6 fields (username, session id, version, network, address type, address), got 5: \"o=- 1 2 IN IP4\""
            ),
            (
                "v=0\no=- 1 x IN IP4 1.2.3.4\n",
                "sdp: line 2: o= session version must be a decimal number, not \"x\": \"o=- 1 x IN IP4 1.2.3.4\""
            ),
            ("v=0\no=- 1 2 IN IP4 127.0.0.1\nt=0 0\n", "sdp: line 3: s= line must follow o=: \"t=0 0\""),
            ("v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\n", "sdp: missing t= line"),
            (
                "v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\nm=audio 9 RTP/AVP 0\n",
                "sdp: line 4: t= line must come before the first m= line: \"m=audio 9 RTP/AVP 0\""
            ),
            (
                "v=0\no=- 1 2 IN IP4 127.0.0.1\n",
                "sdp: description ends before its o= and s= lines"
            ),
            (head + "hello\n", "sdp: line 5: line must look like <letter>=<value>: \"hello\""),
            (head + "x=1\n", "sdp: line 5: unknown line type 'x': \"x=1\""),
            (head + "v=0\n", "sdp: line 5: v= line may appear only once, at the start: \"v=0\""),
            (
                "v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\nt=0\n",
                "sdp: line 4: t= line needs a start and a stop time: \"t=0\""
            ),
            (head + "b=AS\n", "sdp: line 5: b= line must look like b=<type>:<number>: \"b=AS\""),
            (head + "a=ice-ufrag:a\r\r\n", "sdp: line 5: line has a carriage return inside it: \"a=ice-ufrag:a\r\""),
            (
                head + "m=video x UDP/TLS/RTP/SAVPF 96\n",
                "sdp: line 5: m= port must be a decimal number, not \"x\": \"m=video x UDP/TLS/RTP/SAVPF 96\""
            ),
            (
                head + "m=video 70000 UDP/TLS/RTP/SAVPF 96\n",
                "sdp: line 5: m= port 70000 is too large (at most 65535): \"m=video 70000 UDP/TLS/RTP/SAVPF 96\""
            ),
            (
                head + "m=video 9 RTP/AVP 96\nt=0 0\n",
                "sdp: line 6: t= line is not allowed in a media section: \"t=0 0\""
            ),
            // Attributes that belong in a media section.
            (
                head + "a=rtpmap:96 VP8/90000\n",
                "sdp: line 5: a=rtpmap must be in a media section (after an m= line): \"a=rtpmap:96 VP8/90000\""
            ),
            (head + "a=mid:0\n", "sdp: line 5: a=mid must be in a media section (after an m= line): \"a=mid:0\""),
            (
                head + "a=candidate:1 1 udp 1 127.0.0.1 9 typ host\n",
                "sdp: line 5: a=candidate must be in a media section (after an m= line): \"a=candidate:1 1 udp 1 127.0.0.1 9 typ host\""
            ),
            (head + "a=:x\n", "sdp: line 5: attribute needs a name: \"a=:x\""),
            (head + "a=group\n", "sdp: line 5: a=group needs a value: \"a=group\""),
            (
                head + "a=extmap-allow-mixed:1\n",
                "sdp: line 5: a=extmap-allow-mixed takes no value: \"a=extmap-allow-mixed:1\""
            ),
            (head + "a=sendonly\na=recvonly\n", "sdp: line 6: more than one direction attribute: \"a=recvonly\"")
        ]
        for row in table {
            #expect(parseError(row.text) == row.error, "\(row.text.debugDescription)")
        }
    }

    @Test func mediaAttributes() {
        let table: [(line: String, error: String)] = [
            // rtpmap
            ("a=rtpmap:96 VP8", "a=rtpmap needs <encoding name>/<clock rate>[/<channels>]"),
            ("a=rtpmap:96", "a=rtpmap needs <payload type> <encoding name>/<clock rate>[/<channels>]"),
            ("a=rtpmap:96 VP8/fast", "a=rtpmap clock rate must be a decimal number, not \"fast\""),
            ("a=rtpmap:200 VP8/90000", "payload type 200 is out of range 0–127"),
            ("a=rtpmap:x VP8/90000", "payload type must be a decimal number, not \"x\""),
            ("a=rtpmap:96 VP8/90000/2/1", "a=rtpmap needs <encoding name>/<clock rate>[/<channels>]"),
            // fmtp, rtcp-fb
            ("a=fmtp:abc apt=96", "payload type must be a decimal number, not \"abc\""),
            ("a=rtcp-fb:96", "a=rtcp-fb needs a feedback type"),
            // candidates
            (
                "a=candidate:1 1 udp 1 127.0.0.1 9 host",
                "candidate needs at least 8 fields (foundation, component, transport, priority, address, port, typ, type), got 7"
            ),
            ("a=candidate:1 1 udp 1 127.0.0.1 9 type host", "candidate needs \"typ\" after the port, found \"type\""),
            (
                "a=candidate:1 1 udp 99999999999 127.0.0.1 9 typ host",
                "candidate priority 99999999999 is too large (at most 4294967295)"
            ),
            (
                "a=candidate:1 1 udp 1 127.0.0.1 9 typ host generation",
                "candidate extension \"generation\" has no value"
            ),
            (
                "a=candidate:1 1 udp 1 127.0.0.1 9 typ host rport x",
                "candidate rport must be a decimal number, not \"x\""
            ),
            (
                "a=candidate:ab:c 1 udp 1 127.0.0.1 9 typ host",
                "candidate foundation must be 1 to 32 letters, digits, + or /, not \"ab:c\""
            ),
            // fingerprint, setup
            ("a=fingerprint:sha-256 D1:58", "a=fingerprint sha-256 needs 32 bytes, got 2"),
            ("a=fingerprint:sha-256 D1:5G", "a=fingerprint value must be hex byte pairs separated by ':'"),
            ("a=fingerprint:sha-256 D15:8", "a=fingerprint value must be hex byte pairs separated by ':'"),
            ("a=fingerprint:sha-1 +A:00", "a=fingerprint value must be hex byte pairs separated by ':'"),
            ("a=fingerprint:sha-256", "a=fingerprint needs a hash function and a hex value, e.g. sha-256 AB:CD:…"),
            ("a=setup:client", "a=setup must be actpass, active, passive or holdconn"),
            // extmap, ssrc, others
            ("a=extmap:0 urn:x", "a=extmap id 0 is out of range (1–255, or 4096–4351 in an offer)"),
            ("a=extmap:1/both urn:x", "a=extmap direction must be sendrecv, sendonly, recvonly or inactive"),
            ("a=extmap:1", "a=extmap needs an id and a URI"),
            ("a=ssrc:1", "a=ssrc needs an SSRC and an attribute, e.g. 1234 cname:abc"),
            ("a=ssrc:-1 cname:x", "a=ssrc SSRC must be a decimal number, not \"-1\""),
            ("a=ssrc-group:FID 1 x", "a=ssrc-group SSRC must be a decimal number, not \"x\""),
            ("a=rtcp:9 IN IP4", "a=rtcp needs a port, optionally followed by network type, address type and address"),
            ("a=rtcp-mux:yes", "a=rtcp-mux takes no value"),
            ("a=mid:", "a=mid needs a value"),
            ("a=ice-options:", "a=ice-options needs a value")
        ]
        for row in table {
            let text = head + "m=video 9 UDP/TLS/RTP/SAVPF 96\n" + row.line + "\n"
            #expect(parseError(text) == "sdp: line 6: \(row.error): \"\(row.line)\"")
        }
    }

    @Test func duplicates() {
        let table: [(lines: [String], error: String)] = [
            (["a=mid:0", "a=mid:1"], "more than one a=mid"),
            (["a=rtpmap:96 VP8/90000", "a=rtpmap:96 H264/90000"], "more than one a=rtpmap for payload type 96"),
            (["a=fmtp:96 a=1", "a=fmtp:96 b=2"], "more than one a=fmtp for payload type 96"),
            (["a=ice-ufrag:a", "a=ice-ufrag:b"], "more than one a=ice-ufrag"),
            (["a=setup:active", "a=setup:passive"], "more than one a=setup"),
            (["c=IN IP4 0.0.0.0", "c=IN IP4 0.0.0.0"], "more than one c= line in a media section")
        ]
        for row in table {
            let text = head + "m=video 9 UDP/TLS/RTP/SAVPF 96\n" + row.lines.joined(separator: "\n") + "\n"
            #expect(parseError(text) == "sdp: line 7: \(row.error): \"\(row.lines[1])\"")
        }
    }

    @Test func standaloneCandidate() {
        #expect(
            throws: SDPError(
                text: "candidate:1 1 udp",
                reason:
                    "candidate needs at least 8 fields (foundation, component, transport, priority, address, port, typ, type), got 3"
            )
        ) {
            try ICECandidate(parsing: "candidate:1 1 udp")
        }
        let error = SDPError(
            text: "candidate:x 1 udp 1 h 99999 typ host", reason: "candidate port 99999 is too large (at most 65535)")
        #expect(
            error.description
                == "sdp: candidate port 99999 is too large (at most 65535): \"candidate:x 1 udp 1 h 99999 typ host\"")
        #expect(throws: error) { try ICECandidate(parsing: "candidate:x 1 udp 1 h 99999 typ host") }
    }

    @Test func longLinesAreShortenedInMessages() {
        let long = "a=setup:" + String(repeating: "z", count: 500)
        let message = parseError(head + "m=video 9 RTP/AVP 96\n" + long + "\n") ?? ""
        #expect(message.hasSuffix("…\""))
        #expect(message.count < 200)
    }
}

/// Found by FuzzSDP's long run (Fuzz/Regressions/FuzzSDP/combining-mark-before-candidate-prefix):
/// a combining mark before `candidate:` made the foundation "͐�candidate:2728776206", which
/// serialized as "candidate:͐�candidate:…"; there `hasPrefix("candidate:")` saw ":͐" as one
/// character, kept the prefix in the foundation, and the round trip changed the candidate.
@Suite struct CandidateFoundationTests {
    @Test func aFoundationOutsideTheICECharactersIsRefused() {
        let found = "\u{350}\u{FFFD}candidate:2728776206 1 \u{FFFD}0.0%.1 59626 127.0.0.1 9 typ host"
        #expect(throws: SDPError.self) { try ICECandidate(parsing: found) }
        #expect(throws: SDPError.self) { try ICECandidate(parsing: "candidate:\u{350}1 1 udp 1 127.0.0.1 9 typ host") }
        #expect(throws: SDPError.self) {
            try ICECandidate(parsing: "candidate:\(String(repeating: "a", count: 33)) 1 udp 1 127.0.0.1 9 typ host")
        }
    }

    @Test func whatParsesRoundTrips() throws {
        for line in [
            "candidate:1 1 udp 2122260223 127.0.0.1 9 typ host", "a=candidate:a+b/C9 1 udp 1 ::1 9 typ host",
            "candidate:\(String(repeating: "f", count: 32)) 2 tcp 1 10.0.0.1 9 typ srflx raddr 0.0.0.0 rport 0"
        ] {
            let candidate = try ICECandidate(parsing: line)
            #expect(try ICECandidate(parsing: candidate.candidateString) == candidate)
        }
    }
}
