import Foundation
@testable import SDPWire
import Testing

/// Descriptions made by headless Chromium 156 over loopback (scripts/capture-chromium-sdp.sh).
@Suite struct ChromiumFixtureTests {
    @Test(arguments: chromiumFixtures)
    func serializesBackToTheSameBytes(name: String) throws {
        let text = try fixture(name)
        let parsed = try SessionDescription.parse(text)
        #expect(parsed.serialize() == text, "Chromium's own order is the writer's order")
        try expectFixedPoint(parsed)
    }

    @Test(arguments: chromiumFixtures)
    func acceptsLFLineEnds(name: String) throws {
        let text = try fixture(name)
        let lf = text.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(try SessionDescription.parse(lf) == SessionDescription.parse(text))
    }

    @Test(arguments: chromiumFixtures)
    func commonFacts(name: String) throws {
        let description = try SessionDescription.parse(try fixture(name))
        #expect(description.origin.username == "-")
        #expect(description.origin.sessionVersion == 2)
        #expect(description.timing == Timing(start: 0, stop: 0))
        #expect(description.extmapAllowMixed)
        #expect(description.msidSemantic?.semantic == "WMS")
        let bundle = try #require(description.bundleGroup)
        #expect(bundle.mids == description.media.compactMap(\.mid))
        for media in description.media {
            let transport = description.transport(for: media)
            #expect(transport.iceOptions == [.trickle])
            #expect(transport.iceUfrag?.isEmpty == false)
            #expect(transport.icePwd?.isEmpty == false)
            #expect(transport.fingerprints.count == 1)
            #expect(transport.fingerprints.first?.algorithm == "sha-256")
            #expect(transport.fingerprints.first?.bytes.count == 32)
            for candidate in media.candidates {
                #expect(candidate.address == "127.0.0.1")
                #expect(candidate.type == .host)
                #expect(candidate.generation == 0)
                #expect(candidate.networkID == 1)
            }
            if media.isRTP {
                #expect(media.rtcpMux)
                #expect(media.rtcpReducedSize)
                #expect(media.rtcp == RTCPAddress(port: 9, connection: .unspecified))
                #expect(media.attributes.contains(SDPAttribute(name: "rtcp-xr", value: "rcvr-rtt=all")))
            }
        }
        // With BUNDLE, the first section carries the candidates.
        #expect(description.media.first?.candidates.isEmpty == false)
        #expect(description.media.first?.candidates.contains { $0.isUDP } == true)
    }

    @Test func sendrecvOffer() throws {
        let offer = try SessionDescription.parse(try fixture("chromium-offer-sendrecv.sdp"))
        #expect(offer.bundleGroup == .bundle(["0", "1", "2"]))
        #expect(offer.media.map(\.kind) == [.video, .audio, .application])
        let video = offer.media[0], audio = offer.media[1], data = offer.media[2]

        #expect(video.proto == "UDP/TLS/RTP/SAVPF")
        #expect(offer.direction(of: video) == .sendrecv)
        #expect(video.transport.setup == .actpass)
        #expect(video.candidates.count == 2)
        #expect(video.candidates[0].port == video.port)
        #expect(video.candidates[1].transport == "tcp")
        #expect(video.candidates[1].tcpType == .active)
        #expect(video.connection == ConnectionData(address: "127.0.0.1"))

        // H.264 Constrained Baseline 3.1, packetization-mode 1, with its RTX.
        let h264 = try #require(
            video.payloads.first {
                $0.rtpMap?.isEncoding("H264") == true && $0.parameter("profile-level-id") == "42e01f"
                    && $0.parameter("packetization-mode") == "1"
            })
        #expect(h264.rtpMap == RTPMap(encodingName: "H264", clockRate: 90_000))
        #expect(h264.feedback == [.remb, .transportCC, .fir, .nack, .pli])
        let rtx = try #require(video.rtxPayloadType(for: h264.payloadType))
        #expect(video.payload(rtx)?.rtpMap == RTPMap(encodingName: "rtx", clockRate: 90_000))
        #expect(video.payloads.contains { $0.rtpMap?.isEncoding("VP8") == true })
        #expect(video.payloads.map(\.payloadType) == video.payloadTypes, "one entry per listed type, in order")

        let uris = video.extensions.map(\.uri)
        #expect(uris.contains(ExtensionMap.absSendTime))
        #expect(uris.contains(ExtensionMap.transportWideCC))
        #expect(uris.contains(ExtensionMap.sdesMid))

        let fid = try #require(video.ssrcGroups.first)
        #expect(fid.semantics == "FID")
        #expect(fid.ssrcs.count == 2)
        #expect(video.ssrcs.filter { $0.name == "cname" }.map(\.ssrc) == fid.ssrcs)
        #expect(video.msids.count == 1)
        #expect(video.ssrcs.contains { $0.name == "msid" && $0.value == video.msids.first?.sdpValue })

        let opus = try #require(audio.payload(111))
        #expect(opus.rtpMap == RTPMap(encodingName: "opus", clockRate: 48_000, channels: 2))
        #expect(opus.parameters == [FormatParameter("minptime", "10"), FormatParameter("useinbandfec", "1")])
        #expect(audio.payload(63)?.parameters == [FormatParameter("111/111", nil)], "RED's bare fmtp")

        #expect(data.proto == "UDP/DTLS/SCTP")
        #expect(data.formats == ["webrtc-datachannel"])
        #expect(!data.isRTP)
        #expect(
            data.attributes == [
                SDPAttribute(name: "sctp-port", value: "5000"),
                SDPAttribute(name: "max-message-size", value: "262144")
            ])
    }

    @Test func offerWithoutH264() throws {
        let offer = try SessionDescription.parse(try fixture("chromium-offer-no-h264.sdp"))
        let video = offer.media[0]
        #expect(offer.direction(of: video) == .sendonly)
        #expect(!video.payloads.contains { $0.rtpMap?.isEncoding("H264") == true })
        #expect(video.payload(96)?.rtpMap?.encodingName == "VP8")
        #expect(video.rtxPayloadType(for: 96) == 97)
    }

    @Test func recvonlyViewerOffer() throws {
        let offer = try SessionDescription.parse(try fixture("chromium-offer-recvonly.sdp"))
        #expect(offer.media.map { offer.direction(of: $0) } == [.recvonly, .recvonly])
        #expect(offer.msidSemantic == MSIDSemantic(identifiers: []))
        for media in offer.media {
            #expect(media.msids.isEmpty)
            #expect(media.ssrcs.isEmpty)
        }
        // The receive side also lists High 4:4:4 (f4001f), which we never take.
        #expect(offer.media[0].payloads.contains { $0.parameter("profile-level-id") == "f4001f" })
    }

    @Test func chromiumAnswer() throws {
        let answer = try SessionDescription.parse(try fixture("chromium-answer.sdp"))
        #expect(answer.media.map { $0.transport.setup } == [.active, .active, .active])
        #expect(answer.media[1].candidates.isEmpty, "bundled sections carry no candidates")
        #expect(answer.media[1].port == 9)
        #expect(answer.media[1].connection == .unspecified)
    }

    @Test func trickledCandidates() throws {
        let lines = try fixture("chromium-trickle-candidates.txt").split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let candidate = try ICECandidate(parsing: String(line))
            #expect(candidate.address == "127.0.0.1")
            #expect(candidate.ufrag?.isEmpty == false)
            #expect(candidate.networkCost == 50)
            #expect(candidate.candidateString == line)
        }
    }
}
