@testable import SDPWire
import Testing

/// `a=rid` (RFC 8851) and `a=simulcast` (RFC 8853): read tolerantly into what sharectl uses, and
/// refused with the reason when malformed; an offer of a simulcast track names its layers.
@Suite struct SimulcastTests {
    @Test func ridLinesRead() throws {
        let plain = try RIDDescription(sdpValue: "h send")
        #expect(plain == RIDDescription(id: "h", direction: .send) && plain.sdpValue == "h send")
        let restricted = try RIDDescription(sdpValue: "lo recv pt=96;max-width=320")
        #expect(restricted.direction == .recv && restricted.restrictions == "pt=96;max-width=320")
        #expect(restricted.sdpValue == "lo recv pt=96;max-width=320")
    }

    @Test func malformedRIDLinesAreRefusedWithTheReason() {
        for (text, words) in [
            ("h", "needs an id and a direction"), ("h sideways", "neither send nor recv"),
            ("a-very-long-rid-name send", "is not 1–16"), ("h\u{7} send", "is not 1–16"), ("", "needs an id")
        ] {
            #expect(throws: SDPError.self) { try RIDDescription(sdpValue: text) }
            do { _ = try RIDDescription(sdpValue: text) } catch {
                #expect("\(error)".contains(words), "\(text): \(error)")
            }
        }
    }

    @Test func simulcastLinesRead() throws {
        let offer = try SimulcastDescription(sdpValue: "send h;m;l")
        #expect(offer.send.map(\.rid) == ["h", "m", "l"] && offer.recv.isEmpty && offer.sdpValue == "send h;m;l")
        // Paused streams, alternatives (the first kept) and both directions.
        let answer = try SimulcastDescription(sdpValue: "recv ~h;m,x;l send a")
        #expect(answer.recv == [.init(rid: "h", paused: true), .init(rid: "m"), .init(rid: "l")])
        #expect(answer.send.map(\.rid) == ["a"])
        #expect(answer.sdpValue == "send a recv ~h;m;l")
    }

    @Test func malformedSimulcastLinesAreRefused() {
        for text in [
            "", "send", "sideways h;m", "send h;h", "send h;;l", "send h recv m send l", "send h send m",
            "recv \u{1b}[2J"
        ] {
            #expect(throws: SDPError.self, "\(text)") { try SimulcastDescription(sdpValue: text) }
        }
    }

    /// A section's lines that do not parse are left out, not trusted; the section itself reads.
    @Test func aSectionsSimulcastIsReadFromItsAttributes() throws {
        var section = MediaDescription(kind: .video)
        section.attributes = [
            SDPAttribute(name: "rid", value: "h send"), SDPAttribute(name: "rid", value: "bad"),
            SDPAttribute(name: "rid", value: "l send"), SDPAttribute(name: "simulcast", value: "send h;l")
        ]
        #expect(section.rids.map(\.id) == ["h", "l"] && section.simulcast?.send.map(\.rid) == ["h", "l"])
        section.attributes = [SDPAttribute(name: "simulcast", value: "send h;h")]
        #expect(section.simulcast == nil)
    }

    /// Our simulcast offer: a=rid and a=simulcast best first, the RID extensions, and no a=ssrc
    /// lines (each layer's packets name it by RID); the text reads back as written.
    @Test func aSimulcastTrackIsOfferedWithItsLayers() throws {
        let transport = LocalTransport(
            iceUfrag: "shar", icePwd: "sharectlsharectlsharectl", fingerprint: Fingerprint(bytes: Array(0..<32)),
            setup: .actpass)
        let track = LocalTrack(
            streamID: "s", trackID: "screen", ssrc: 11, rtxSSRC: 12, cname: "c", rids: ["h", "m", "l"])
        let offer = OfferBuilder(
            transport: transport, origin: Origin(sessionID: "1", sessionVersion: 1), video: .sendonly,
            audio: nil, videoTrack: track
        ).offer()
        try expectFixedPoint(offer)
        let video = try #require(offer.media.first)
        #expect(video.rids.map(\.sdpValue) == ["h send", "m send", "l send"])
        #expect(video.simulcast?.sdpValue == "send h;m;l")
        #expect(video.ssrcs.isEmpty && video.ssrcGroups.isEmpty && video.msids.count == 1)
        let uris = Dictionary(uniqueKeysWithValues: video.extensions.map { ($0.uri, $0.id) })
        #expect(uris[ExtensionMap.rtpStreamID] == 4 && uris[ExtensionMap.repairedRTPStreamID] == 5)
        // One stream: SSRCs as before, no RID lines or extensions.
        let single = OfferBuilder(
            transport: transport, origin: Origin(sessionID: "1", sessionVersion: 1), video: .sendonly,
            audio: nil, videoTrack: LocalTrack(streamID: "s", trackID: "screen", ssrc: 11, rtxSSRC: 12, cname: "c")
        ).offer().media[0]
        #expect(single.rids.isEmpty && single.simulcast == nil && single.ssrcs.map(\.ssrc).contains(11))
        #expect(!single.extensions.contains { $0.uri == ExtensionMap.rtpStreamID })
    }
}
