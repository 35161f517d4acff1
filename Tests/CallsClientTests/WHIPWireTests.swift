@testable import CallsClient
import Foundation
import Testing
@testable import Signalling

/// WHIP's text formats, without a server: Link fields (RFC 8288 + RFC 9725 §4.6), SDP fragments
/// (RFC 8840) and Retry-After (RFC 9110 §10.2.3).
@Suite struct WHIPWireTests {
    // MARK: Link

    @Test func linkFieldsWithListsAndQuotedStrings() {
        let fields = [
            #"<turn:t.example.net?transport=tcp>; rel="ice-server"; username="a\"b"; credential="x,y;z""#,
            #"<https://example.net/doc>; rel="help", <stun:s.example.net:19302>;rel=ice-server"#,
            #"<turns:t.example.net>; rel="ice-server other"; username=u; credential=c; credential-type=password"#
        ]
        let (servers, skipped) = WHIPICEServer.parse(linkFields: fields)
        #expect(skipped.isEmpty)
        #expect(
            servers == [
                WHIPICEServer(
                    uri: "turn:t.example.net?transport=tcp", scheme: .turn, host: "t.example.net", port: 3478,
                    transport: .tcp, username: "a\"b", credential: "x,y;z"),
                WHIPICEServer(uri: "stun:s.example.net:19302", scheme: .stun, host: "s.example.net", port: 19302),
                WHIPICEServer(
                    uri: "turns:t.example.net", scheme: .turns, host: "t.example.net", port: 5349,
                    username: "u", credential: "c")
            ])
    }

    @Test func unusableIceServersAreSkippedWithAReason() {
        let fields = [
            #"<turn:t.example.net>; rel="ice-server"; username="u"; credential="t"; credential-type="oauth""#,
            #"<turn:t.example.net>; rel="ice-server""#,
            #"<http://t.example.net>; rel="ice-server""#,
            #"<stun:s.example.net:99999>; rel="ice-server""#,
            #"<turn:t.example.net?transport=sctp>; rel="ice-server"; username="u"; credential="c""#,
            #"garbage without brackets, <stun:ok.example.net>; rel="ice-server""#,
            #"<stun:unterminated.example.net>; rel="ice-server"; username="oops"#
        ]
        let (servers, skipped) = WHIPICEServer.parse(linkFields: fields)
        #expect(servers.map(\.host) == ["ok.example.net"])
        #expect(skipped.count == 5)
        #expect(skipped[0].contains("credential-type \"oauth\""))
        #expect(skipped[1].contains("needs a username and a credential"))
    }

    @Test func descriptionNeverShowsTheCredential() {
        let server = WHIPICEServer(
            uri: "turn:t.example.net", scheme: .turn, host: "t.example.net", port: 3478,
            username: "user", credential: "secret")
        #expect(server.description == "turn:t.example.net (username user)")
    }

    // MARK: SDP fragments

    @Test func fragmentRoundTripsAndAcceptsBareLF() throws {
        let fragment = TrickleICEFragment(
            iceUfrag: "EsAw", icePwd: "P2uYro0UCOQ4zxjKXaWCBui1",
            media: [
                .init(
                    mid: "0", mediaLine: "audio 9 UDP/TLS/RTP/SAVPF 111",
                    candidates: [
                        "1387637174 1 udp 2122260223 192.0.2.1 61764 typ host generation 0",
                        "473322822 1 tcp 1518280447 192.0.2.1 9 typ host tcptype active"
                    ],
                    endOfCandidates: true)
            ])
        let text = try fragment.serialized()
        #expect(
            text == """
                a=ice-ufrag:EsAw\r
                a=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r
                m=audio 9 UDP/TLS/RTP/SAVPF 111\r
                a=mid:0\r
                a=candidate:1387637174 1 udp 2122260223 192.0.2.1 61764 typ host generation 0\r
                a=candidate:473322822 1 tcp 1518280447 192.0.2.1 9 typ host tcptype active\r
                a=end-of-candidates\r

                """)
        #expect(try TrickleICEFragment.parse(text) == fragment)
        #expect(try TrickleICEFragment.parse(text.replacingOccurrences(of: "\r\n", with: "\n")) == fragment)
    }

    @Test func fragmentWithMediaLevelCredentialsAndOtherAttributes() throws {
        // RFC 9725's trickle example puts the credentials under the m= line, with a BUNDLE group.
        let text =
            "a=group:BUNDLE 0 1\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=ice-ufrag:EsAw\r\n"
            + "a=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\na=candidate:1 1 udp 2122260223 192.0.2.1 61764 typ host\r\n"
        let fragment = try TrickleICEFragment.parse(text)
        #expect(fragment.iceUfrag == "EsAw")
        #expect(fragment.icePwd == "P2uYro0UCOQ4zxjKXaWCBui1")
        #expect(fragment.media.map(\.candidates) == [["1 1 udp 2122260223 192.0.2.1 61764 typ host"]])
    }

    @Test func brokenFragmentsAreRefused() {
        #expect(throws: TrickleICEFragmentError.notSDPLine(number: 1, line: "<html>")) {
            try TrickleICEFragment.parse("<html>\r\n")
        }
        #expect(throws: TrickleICEFragmentError.outsideMedia("a=candidate:1 1 udp 1 1.2.3.4 5 typ host")) {
            try TrickleICEFragment.parse("a=candidate:1 1 udp 1 1.2.3.4 5 typ host\r\n")
        }
        #expect(throws: TrickleICEFragmentError.mediaWithoutMid("audio 9 RTP/AVP 0")) {
            try TrickleICEFragment.parse("m=audio 9 RTP/AVP 0\r\na=candidate:1 1 udp 1 1.2.3.4 5 typ host\r\n")
        }
        #expect(throws: TrickleICEFragmentError.invalidCandidate("not a candidate")) {
            try TrickleICEFragment(
                iceUfrag: nil, icePwd: nil,
                media: [.init(mid: "0", candidates: ["not a candidate"])]
            ).serialized()
        }
        // Credentials that would break the line, or that ICE does not allow.
        #expect(throws: TrickleICEFragmentError.invalidValue(name: "ice-ufrag", value: "ab\r\nc")) {
            try TrickleICEFragment(iceUfrag: "ab\r\nc", icePwd: nil, media: []).serialized()
        }
        #expect(throws: TrickleICEFragmentError.invalidValue(name: "ice-pwd", value: "short")) {
            try TrickleICEFragment(iceUfrag: nil, icePwd: "short", media: []).serialized()
        }
    }

    // MARK: Retry-After

    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func retryAfterInSecondsAndInEachDateForm() {
        #expect(RetryAfter.delay("3", now: Self.now) == .seconds(3))
        #expect(RetryAfter.delay(" 0 ", now: Self.now) == .zero)
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:47 GMT", now: Self.now) == .seconds(10))
        #expect(RetryAfter.delay("Sunday, 06-Nov-94 08:49:57 GMT", now: Self.now) == .seconds(20))
        #expect(RetryAfter.delay("Sun Nov  6 08:50:07 1994", now: Self.now) == .seconds(30))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.now) == .zero, "a past date means now")
        #expect(RetryAfter.httpDate("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.httpDate("Tue, 29 Feb 2000 12:00:00 GMT") == 951_825_600)
    }

    @Test func retryAfterThatIsNeitherFormIsNil() {
        for value in [
            "", "-1", "1.5", "soon", "Sun, 06 Nov 1994 25:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 CET"
        ] {
            #expect(RetryAfter.delay(value, now: Self.now) == nil, "\(value)")
        }
        #expect(RetryAfter.delay("99999999999999999999999", now: Self.now) != nil, "huge but still a delay")
    }

    // MARK: URL resolution

    @Test func locationsResolveLikeRFC3986() {
        let base = "http://127.0.0.1:8080/app/whip?x=1"
        #expect(HTTPURL.resolve("sessions/7", against: base) == "http://127.0.0.1:8080/app/sessions/7")
        #expect(HTTPURL.resolve("/s/7", against: base) == "http://127.0.0.1:8080/s/7")
        #expect(HTTPURL.resolve("//other.example:9/s", against: base) == "http://other.example:9/s")
        #expect(HTTPURL.resolve("https://x.example/s", against: base) == "https://x.example/s")
        #expect(HTTPURL.resolve("ftp://x.example/s", against: base) == nil)
        #expect(HTTPURL.resolve("javascript:alert(1)", against: base) == nil)
        #expect(HTTPURL.resolve("", against: base) == nil)
    }
}
