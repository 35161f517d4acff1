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
