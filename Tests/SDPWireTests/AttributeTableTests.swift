@testable import SDPWire
import Testing

/// One table per attribute kind: the line as written, what it means, and that it is written back
/// the same way.
@Suite struct AttributeTableTests {
    /// Parses `line` in a media section and checks it serializes back to itself.
    private func media(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> MediaDescription {
        let text = sdp(media: [line])
        let parsed = try SessionDescription.parse(text)
        #expect(
            parsed.serialize().contains("\r\n" + line + "\r\n"), "written back as read", sourceLocation: sourceLocation)
        try expectFixedPoint(parsed, sourceLocation: sourceLocation)
        return try #require(parsed.media.first)
    }

    @Test func sessionLines() throws {
        let text =
            [
                "v=0",
                "o=jdoe 2890844526 2890842807 IN IP4 10.47.16.5",  // username, id, version, address
                "s=SDP Seminar",
                "i=A Seminar on the session description protocol",  // kept
                "u=http://www.example.com/seminars/sdp.pdf",  // kept
                "e=j.doe@example.com (Jane Doe)",  // kept
                "c=IN IP4 224.2.17.12/127",  // multicast with TTL
                "b=AS:2500",
                "t=2873397496 2873404696",
                "r=7d 1h 0 25h",  // kept
                "a=group:BUNDLE a b",
                "a=group:LS a",
                "a=msid-semantic:WMS *",
                "a=ice-lite",
                "a=recvonly",  // session default direction
                "a=tool:sharectl",  // unknown, kept
                "m=audio 49170 RTP/AVP 0"
            ].joined(separator: "\r\n") + "\r\n"
        let parsed = try SessionDescription.parse(text)
        #expect(
            parsed.origin
                == Origin(
                    username: "jdoe", sessionID: "2890844526", sessionVersion: 2890842807,
                    address: "10.47.16.5"))
        #expect(parsed.sessionName == "SDP Seminar")
        #expect(parsed.connection == ConnectionData(address: "224.2.17.12/127"))
        #expect(parsed.bandwidths == [Bandwidth(type: "AS", value: 2500)])
        #expect(parsed.timing == Timing(start: 2873397496, stop: 2873404696))
        #expect(parsed.extraLines.map { String(Character($0.type)) } == ["i", "u", "e", "r"])
        #expect(parsed.iceLite)
        #expect(parsed.groups == [.bundle(["a", "b"]), MediaGroup(semantics: "LS", mids: ["a"])])
        #expect(parsed.msidSemantic == MSIDSemantic(identifiers: ["*"]))
        #expect(parsed.direction == .recvonly)
        #expect(parsed.direction(of: parsed.media[0]) == .recvonly)
        #expect(parsed.attributes == [SDPAttribute(name: "tool", value: "sharectl")])
        #expect(parsed.media[0].payloads.isEmpty, "static payload type 0 has no attributes")
        #expect(parsed.media[0].payloadTypes == [0])
        #expect(
            parsed.serialize() == text.replacingOccurrences(of: "a=msid-semantic:WMS", with: "a=msid-semantic: WMS"))
        try expectFixedPoint(parsed)
    }

    @Test func mLines() throws {
        let table: [(line: String, kind: MediaKind, port: UInt16, count: UInt16?, proto: String, formats: [String])] = [
            ("m=video 9 UDP/TLS/RTP/SAVPF 96 97", .video, 9, nil, "UDP/TLS/RTP/SAVPF", ["96", "97"]),
            ("m=audio 0 UDP/TLS/RTP/SAVPF 111", .audio, 0, nil, "UDP/TLS/RTP/SAVPF", ["111"]),  // rejected
            (
                "m=application 9 UDP/DTLS/SCTP webrtc-datachannel", .application, 9, nil, "UDP/DTLS/SCTP",
                ["webrtc-datachannel"]
            ),
            ("m=video 49170/2 RTP/AVP 31", .video, 49170, 2, "RTP/AVP", ["31"]),  // port/count
            ("m=text 9 RTP/AVP 98", "text", 9, nil, "RTP/AVP", ["98"])  // other kind
        ]
        for row in table {
            let parsed = try SessionDescription.parse(sdp(mLine: row.line))
            let media = try #require(parsed.media.first)
            #expect(media.kind == row.kind && media.port == row.port && media.portCount == row.count)
            #expect(media.proto == row.proto && media.formats == row.formats)
            #expect(media.sdpLines.first == row.line)
        }
        #expect(try SessionDescription.parse(sdp(mLine: "m=audio 0 UDP/TLS/RTP/SAVPF 111")).media[0].isRejected)
        let bundleOnly = try media("a=bundle-only")
        #expect(bundleOnly.bundleOnly)
    }

    @Test func identityAndRTCP() throws {
        #expect(try media("a=mid:0").mid == "0")
        #expect(try media("a=mid:video-screen").mid == "video-screen")
        #expect(try media("a=msid:stream track").msids == [MediaStreamID(streamID: "stream", trackID: "track")])
        #expect(try media("a=msid:- track").msids == [MediaStreamID(streamID: "-", trackID: "track")])
        #expect(try media("a=msid:stream").msids == [MediaStreamID(streamID: "stream")])
        #expect(try media("a=rtcp:9 IN IP4 0.0.0.0").rtcp == RTCPAddress(port: 9, connection: .unspecified))
        #expect(try media("a=rtcp:53020").rtcp == RTCPAddress(port: 53020))
        #expect(try media("a=rtcp-mux").rtcpMux)
        #expect(try media("a=rtcp-mux-only").rtcpMuxOnly)
        #expect(try media("a=rtcp-rsize").rtcpReducedSize)
        #expect(try media("a=end-of-candidates").endOfCandidates)
        for direction in MediaDirection.allCases {
            #expect(try media("a=\(direction.rawValue)").direction == direction)
        }
    }

    @Test func payloadAttributes() throws {
        let table: [(line: String, expect: PayloadFormat)] = [
            (
                "a=rtpmap:96 VP8/90000",  // name/clock
                PayloadFormat(payloadType: 96, rtpMap: RTPMap(encodingName: "VP8", clockRate: 90_000))
            ),
            (
                "a=rtpmap:96 opus/48000/2",  // name/clock/channels
                PayloadFormat(payloadType: 96, rtpMap: RTPMap(encodingName: "opus", clockRate: 48_000, channels: 2))
            ),
            (
                "a=fmtp:96 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
                PayloadFormat(
                    payloadType: 96,
                    parameters: [
                        FormatParameter("level-asymmetry-allowed", "1"),
                        FormatParameter("packetization-mode", "1"),
                        FormatParameter("profile-level-id", "42e01f")
                    ])
            ),
            (
                "a=fmtp:97 apt=96",  // RTX association
                PayloadFormat(payloadType: 97, parameters: [FormatParameter("apt", "96")])
            ),
            (
                "a=fmtp:96 111/111",  // RED: a bare value
                PayloadFormat(payloadType: 96, parameters: [FormatParameter("111/111", nil)])
            ),
            (
                "a=rtcp-fb:96 nack",
                PayloadFormat(payloadType: 96, feedback: [.nack])
            ),
            (
                "a=rtcp-fb:96 nack pli",
                PayloadFormat(payloadType: 96, feedback: [.pli])
            ),
            (
                "a=rtcp-fb:96 ccm fir",
                PayloadFormat(payloadType: 96, feedback: [.fir])
            ),
            (
                "a=rtcp-fb:96 goog-remb",
                PayloadFormat(payloadType: 96, feedback: [.remb])
            ),
            (
                "a=rtcp-fb:96 transport-cc",
                PayloadFormat(payloadType: 96, feedback: [.transportCC])
            ),
            (
                "a=rtcp-fb:96 ccm tmmbr smaxpr=120",  // parameter with spaces
                PayloadFormat(payloadType: 96, feedback: [RTCPFeedback("ccm", "tmmbr smaxpr=120")])
            )
        ]
        for row in table {
            #expect(try media(row.line).payloads == [row.expect], "\(row.line)")
        }
        #expect(try media("a=rtcp-fb:* nack").feedbackForAllPayloads == [.nack])
        // Spaces after ';' are read, and written without them.
        let spaced = try section("a=fmtp:111 minptime=10; useinbandfec=1")
        #expect(
            spaced.payloads[0].parameters == [FormatParameter("minptime", "10"), FormatParameter("useinbandfec", "1")])
    }

    @Test func payloadTypesFollowTheMLine() throws {
        let media = try section(
            "a=rtpmap:97 rtx/90000",
            "a=fmtp:97 apt=96",
            "a=rtpmap:100 red/90000",  // not in the m= line: after those that are
            "a=rtpmap:96 VP8/90000",
            "a=rtcp-fb:96 nack")
        #expect(media.payloads.map(\.payloadType) == [96, 97, 100])
        #expect(media.payload(96)?.feedback == [.nack])
        #expect(media.rtxPayloadType(for: 96) == 97)
        #expect(media.payload(97)?.associatedPayloadType == 96)
        #expect(
            Array(media.sdpLines.suffix(5)) == [
                "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack",  // rtpmap, rtcp-fb, fmtp per type
                "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
                "a=rtpmap:100 red/90000"
            ])
        try expectFixedPoint(
            try SessionDescription.parse(sdp(media: ["a=rtpmap:97 rtx/90000", "a=rtpmap:96 VP8/90000"])))
    }

    @Test func extensionMaps() throws {
        let table: [(line: String, expect: ExtensionMap)] = [
            (
                "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
                ExtensionMap(id: 2, uri: ExtensionMap.absSendTime)
            ),
            (
                "a=extmap:4 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
                ExtensionMap(id: 4, uri: ExtensionMap.transportWideCC)
            ),
            (
                "a=extmap:9 urn:ietf:params:rtp-hdrext:sdes:mid",
                ExtensionMap(id: 9, uri: ExtensionMap.sdesMid)
            ),
            (
                "a=extmap:3/sendonly urn:3gpp:video-orientation",  // with direction
                ExtensionMap(id: 3, direction: .sendonly, uri: "urn:3gpp:video-orientation")
            ),
            (
                "a=extmap:20 urn:ietf:params:rtp-hdrext:ssrc-audio-level vad=on",  // two-byte id, attributes
                ExtensionMap(id: 20, uri: "urn:ietf:params:rtp-hdrext:ssrc-audio-level", attributes: "vad=on")
            )
        ]
        for row in table {
            #expect(try media(row.line).extensions == [row.expect], "\(row.line)")
        }
        // Allowed at session level too.
        let session = try SessionDescription.parse(sdp(session: ["a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid"]))
        #expect(session.extensions == [ExtensionMap(id: 1, uri: ExtensionMap.sdesMid)])
        try expectFixedPoint(session)
    }

    @Test func sources() throws {
        let media = try media("a=ssrc-group:FID 1860184539 4216065440")
        #expect(media.ssrcGroups == [SSRCGroup(semantics: "FID", ssrcs: [1860184539, 4216065440])])
        let table: [(line: String, expect: SSRCAttribute)] = [
            (
                "a=ssrc:1860184539 cname:TQlK/ij+ZSLZwqBx",
                SSRCAttribute(ssrc: 1860184539, name: "cname", value: "TQlK/ij+ZSLZwqBx")
            ),
            (
                "a=ssrc:1860184539 msid:stream track",  // value with a space
                SSRCAttribute(ssrc: 1860184539, name: "msid", value: "stream track")
            ),
            (
                "a=ssrc:4294967295 label:x:y",  // colon in the value
                SSRCAttribute(ssrc: 4294967295, name: "label", value: "x:y")
            ),
            (
                "a=ssrc:1 mslabel",  // no value
                SSRCAttribute(ssrc: 1, name: "mslabel", value: nil)
            )
        ]
        for row in table {
            let parsed = try self.media(row.line)
            #expect(parsed.ssrcs == [row.expect], "\(row.line)")
        }
        #expect(try section("a=ssrc:1 cname:a", "a=ssrc:2 cname:b").cname == "a")
    }

    @Test func iceAndDTLS() throws {
        let media = try section(
            "a=ice-ufrag:NGoL",
            "a=ice-pwd:+nDz7hWq9buowaUmLxWo8rND",
            "a=ice-options:trickle renomination",
            "a=fingerprint:sha-256 D1:58:F7:36:59:DA:48:24:47:3E:F2:BB:9B:A2:92:12:3A:7E:37:DB:58:35:68:5D:58:12:99:57:7E:1D:8F:ED",
            "a=setup:actpass")
        #expect(media.transport.iceUfrag == "NGoL")
        #expect(media.transport.icePwd == "+nDz7hWq9buowaUmLxWo8rND")
        #expect(media.transport.iceOptions == [.trickle, .renomination])
        let fingerprint = try #require(media.transport.fingerprints.first)
        #expect(fingerprint.algorithm == "sha-256")
        #expect(fingerprint.bytes.prefix(3) == [0xD1, 0x58, 0xF7] && fingerprint.bytes.last == 0xED)
        #expect(media.transport.setup == .actpass)
        for role in DTLSSetup.allCases {
            #expect(try section("a=setup:\(role.rawValue)").transport.setup == role)
        }
        // Lower-case hex reads the same and is written upper-case.
        let lower = try section("a=fingerprint:sha-1 00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33")
        #expect(
            lower.transport.fingerprints.first?.hexString
                == "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33")
        // At session level, sections fall back to it.
        let session = try SessionDescription.parse(
            sdp(
                session: [
                    "a=ice-ufrag:abcd", "a=ice-pwd:0123456789012345678901",
                    "a=setup:passive"
                ], media: ["a=ice-ufrag:efgh"]))
        let transport = session.transport(for: session.media[0])
        #expect(
            transport.iceUfrag == "efgh" && transport.icePwd == "0123456789012345678901" && transport.setup == .passive)
        #expect(DTLSSetup.answering(.actpass) == .active)
        #expect(DTLSSetup.answering(.active) == .passive)
    }

    @Test func candidates() throws {
        let table: [(line: String, expect: ICECandidate)] = [
            (
                "a=candidate:2728776202 1 udp 2122260223 127.0.0.1 49376 typ host generation 0 network-id 1 network-cost 50",
                ICECandidate(
                    foundation: "2728776202", priority: 2122260223, address: "127.0.0.1", port: 49376,
                    generation: 0, networkID: 1, networkCost: 50)
            ),
            (
                "a=candidate:1544488606 1 tcp 1518280447 127.0.0.1 9 typ host tcptype active generation 0 network-id 1",
                ICECandidate(
                    foundation: "1544488606", transport: "tcp", priority: 1518280447, address: "127.0.0.1",
                    port: 9, tcpType: .active, generation: 0, networkID: 1)
            ),
            (
                "a=candidate:842163049 1 udp 1677729535 203.0.113.7 61665 typ srflx raddr 192.168.1.4 rport 61665 generation 0 ufrag EsAw",
                ICECandidate(
                    foundation: "842163049", priority: 1677729535, address: "203.0.113.7", port: 61665,
                    type: .srflx, relatedAddress: "192.168.1.4", relatedPort: 61665, generation: 0, ufrag: "EsAw")
            ),
            (
                "a=candidate:3 1 udp 41885439 198.51.100.9 3478 typ relay raddr 0.0.0.0 rport 0",
                ICECandidate(
                    foundation: "3", priority: 41885439, address: "198.51.100.9", port: 3478, type: .relay,
                    relatedAddress: "0.0.0.0", relatedPort: 0)
            ),
            (
                "a=candidate:4 2 UDP 1845501695 2001:db8::1 5000 typ prflx",  // Firefox writes UDP
                ICECandidate(
                    foundation: "4", component: 2, transport: "UDP", priority: 1845501695, address: "2001:db8::1",
                    port: 5000, type: .prflx)
            ),
            (
                "a=candidate:5 1 udp 2122260223 1f4712db-ea17-4bcf-a596-105139dfd8bf.local 54400 typ host x-custom 7",
                ICECandidate(
                    foundation: "5", priority: 2122260223, address: "1f4712db-ea17-4bcf-a596-105139dfd8bf.local",
                    port: 54400, extensions: [.init(name: "x-custom", value: "7")])
            )  // unknown pair kept
        ]
        for row in table {
            #expect(try media(row.line).candidates == [row.expect], "\(row.line)")
            let value = String(row.line.dropFirst("a=candidate:".count))
            // Standalone, as trickled: with or without "a=", with a line end.
            #expect(try ICECandidate(parsing: "candidate:" + value) == row.expect)
            #expect(try ICECandidate(parsing: row.line + "\r\n") == row.expect)
            #expect(row.expect.candidateString == "candidate:" + value)
        }
        #expect(try ICECandidate(parsing: "candidate:4 2 UDP 1 h 1 typ host").isUDP)
    }

    @Test func unknownAttributesKeepTheirOrder() throws {
        let media = try section("a=x-google-flag:conference", "a=mid:0", "a=rtcp-xr:rcvr-rtt=all", "a=empty:", "a=flag")
        #expect(
            media.attributes == [
                SDPAttribute(name: "x-google-flag", value: "conference"),
                SDPAttribute(name: "rtcp-xr", value: "rcvr-rtt=all"),
                SDPAttribute(name: "empty", value: ""),
                SDPAttribute(name: "flag")
            ])
        try expectFixedPoint(
            try SessionDescription.parse(sdp(media: ["a=x-google-flag:conference", "a=mid:0", "a=flag"])))
    }
}
