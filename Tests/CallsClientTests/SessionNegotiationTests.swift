@testable import CallsClient
import SDPWire
import Testing
@testable import CallMedia
@testable import RoomProtocol
@testable import ShareCore
@testable import Signalling

/// Reading a completed offer/answer exchange.
@Suite struct SessionNegotiationTests {
    static let fingerprint = (0..<32).map { _ in "AB" }.joined(separator: ":")

    /// A bundled video (VP8) and audio (Opus) description; `mids` names the two sections.
    static func description(setup: String, direction: String, mids: (String, String)) -> String {
        let transport =
            "c=IN IP4 0.0.0.0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n"
            + "a=fingerprint:sha-256 \(fingerprint)\r\na=setup:\(setup)\r\na=rtcp-mux\r\na=\(direction)\r\n"
        return "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE \(mids.0) \(mids.1)\r\n"
            + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n" + transport + "a=mid:\(mids.0)\r\na=rtpmap:96 VP8/90000\r\n"
            + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\n" + transport + "a=mid:\(mids.1)\r\na=rtpmap:111 opus/48000/2\r\n"
    }

    @Test func anAnswerReadsBySection() throws {
        let offer = try SessionDescription.parse(
            Self.description(setup: "actpass", direction: "sendonly", mids: ("0", "1")))
        let answer = try SessionDescription.parse(
            Self.description(setup: "active", direction: "recvonly", mids: ("0", "1")))
        let negotiated = try SessionNegotiation.read(answer: answer, offer: offer, weOffered: true)
        #expect(negotiated.media["0"]?.codec == .vp8 && negotiated.media["1"]?.codec == .opus)
        #expect(negotiated.transport.dtlsRole == .server)
    }

    /// FuzzNegotiation found this (Fuzz/Regressions/FuzzNegotiation): an answer whose audio section
    /// repeated the video section's mid was read as Opus for mid 0, the video transceiver's.
    @Test func anAnswerWithAMidTwiceIsRefused() throws {
        let offer = try SessionDescription.parse(
            Self.description(setup: "actpass", direction: "sendonly", mids: ("0", "1")))
        let answer = try SessionDescription.parse(
            Self.description(setup: "active", direction: "recvonly", mids: ("0", "0")))
        #expect(throws: SessionNegotiation.Failure(description: "the answer has two media sections with a=mid:0")) {
            try SessionNegotiation.read(answer: answer, offer: offer, weOffered: true)
        }
    }
}

/// Which simulcast layers an answer took (RFC 8853 §5.3): ours it lists in `a=simulcast:recv`,
/// in our order, with the RID extension kept; fewer than two is one stream.
@Suite struct SimulcastNegotiationTests {
    static func section(_ lines: [String]) throws -> MediaDescription {
        let text =
            "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\n"
            + "a=mid:0\r\na=rtpmap:96 VP8/90000\r\n" + lines.map { $0 + "\r\n" }.joined()
        return try #require(try SessionDescription.parse(text).media.first)
    }

    static let offer = [
        "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=rid:h send", "a=rid:m send", "a=rid:l send",
        "a=simulcast:send h;m;l"
    ]

    @Test func theAnswersLayersInOurOrder() throws {
        let offered = try Self.section(Self.offer)
        let answer = try Self.section([
            "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=rid:l recv", "a=rid:h recv",
            "a=simulcast:recv l;~h"
        ])
        #expect(SessionNegotiation.simulcastRIDs(offered: offered, answer: answer) == ["h", "l"])
        let all = try Self.section([
            "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=simulcast:recv h;m;l"
        ])
        #expect(SessionNegotiation.simulcastRIDs(offered: offered, answer: all) == ["h", "m", "l"])
    }

    @Test func withoutSimulcastOrTheRIDExtensionItIsOneStream() throws {
        let offered = try Self.section(Self.offer)
        for lines in [
            [String](),  // an endpoint that knows no simulcast
            ["a=simulcast:recv h;m;l"],  // no RID extension: layers cannot be told apart
            ["a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=simulcast:recv h"],  // one layer
            ["a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=simulcast:recv x;y"],  // not ours
            ["a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=simulcast:recv h;h"]  // malformed
        ] {
            let answer = try Self.section(lines)
            #expect(SessionNegotiation.simulcastRIDs(offered: offered, answer: answer).isEmpty, "\(lines)")
        }
    }
}
