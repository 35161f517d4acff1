import Foundation
@testable import SDPWire
import Testing

/// Reads a captured fixture from `Fixtures/`.
func fixture(_ name: String) throws -> String {
    let directory = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
    // Decoded the way FuzzSDP decodes its input: invalid UTF-8 becomes U+FFFD.
    return String(decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self)
}

/// The Chromium offers and answers captured by scripts/capture-chromium-sdp.sh.
let chromiumFixtures = [
    "chromium-offer-sendrecv.sdp", "chromium-offer-no-h264.sdp", "chromium-offer-recvonly.sdp",
    "chromium-answer.sdp", "chromium-answer-sendonly.sdp"
]

/// A minimal session around one media section, LF line ends.
func sdp(session: [String] = [], media: [String] = [], mLine: String = "m=video 9 UDP/TLS/RTP/SAVPF 96 97") -> String {
    (["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0"] + session + [mLine] + media).joined(separator: "\n") + "\n"
}

/// The one media section of `sdp(media:)`.
func section(_ lines: String...) throws -> MediaDescription {
    let parsed = try SessionDescription.parse(sdp(media: lines))
    return try #require(parsed.media.first)
}

/// parse → serialize → parse gives the same value, and serializing again the same text.
func expectFixedPoint(_ description: SessionDescription, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let text = description.serialize()
    let again = try SessionDescription.parse(text)
    #expect(again == description, sourceLocation: sourceLocation)
    #expect(again.serialize() == text, sourceLocation: sourceLocation)
}

/// The message `parse` throws for `text`, or nil when it parses.
func parseError(_ text: String) -> String? {
    do {
        _ = try SessionDescription.parse(text)
        return nil
    } catch {
        return error.description
    }
}
