@testable import SDPWire
import Testing

@Suite struct OfferAnswerTests {
    let local = LocalTransport(
        iceUfrag: "shar", icePwd: "sharectlsharectlsharectl",
        fingerprint: Fingerprint(bytes: Array(0..<32)), setup: .active,
        candidates: [
            ICECandidate(
                foundation: "1", priority: 2122260223, address: "127.0.0.1", port: 40000,
                generation: 0)
        ],
        endOfCandidates: true)
    let origin = Origin(sessionID: "1234567890", sessionVersion: 1)
    let videoTrack = LocalTrack(
        streamID: "screen", trackID: "screen-video", ssrc: 1111, rtxSSRC: 2222, cname: "sharectl")
    let audioTrack = LocalTrack(streamID: "screen", trackID: "mic", ssrc: 3333, cname: "sharectl")

    private func answer(_ name: String, video: MediaDirection = .sendrecv) throws -> (
        SessionDescription, SessionDescription
    ) {
        let offer = try SessionDescription.parse(try fixture(name))
        let builder = AnswerBuilder(
            transport: local, origin: origin, video: video, audio: .sendrecv,
            videoTrack: videoTrack, audioTrack: audioTrack)
        let answer = builder.answer(to: offer)
        try expectFixedPoint(answer)
        return (offer, answer)
    }

    @Test func answersChromiumSendrecvOffer() throws {
        let (offer, answer) = try self.answer("chromium-offer-sendrecv.sdp")
        #expect(answer.media.map(\.mid) == offer.media.map(\.mid), "every section answered, mids kept")
        #expect(answer.bundleGroup == .bundle(["0", "1"]), "the data channel is not bundled")
        let video = answer.media[0], audio = answer.media[1], data = answer.media[2]

        // H.264 Constrained Baseline (108, 42e01f, mode 1) first, with its RTX; then Main; then VP8.
        #expect(video.formats == ["108", "109", "116", "117", "96", "97"])
        let h264 = try #require(video.payloads.first)
        #expect(h264.payloadType == 108)
        #expect(h264.parameter("profile-level-id") == "42e01f")
        #expect(h264.parameter("packetization-mode") == "1")
        #expect(h264.feedback == [.remb, .transportCC, .fir, .nack, .pli])
        #expect(
            video.payload(109)
                == PayloadFormat(
                    payloadType: 109, rtpMap: RTPMap(encodingName: "rtx", clockRate: 90_000),
                    parameters: [FormatParameter("apt", "108")]))
        #expect(video.rtxPayloadType(for: 96) == 97)
        #expect(video.direction == .sendrecv)
        #expect(
            video.extensions.map(\.uri) == [
                ExtensionMap.absSendTime, ExtensionMap.transportWideCC, ExtensionMap.sdesMid
            ])
        #expect(video.extensions.map(\.id) == [2, 4, 9], "the offered ids")
        #expect(video.rtcpMux && video.rtcpReducedSize)

        // Our transport; candidates only in the first bundled section.
        #expect(
            video.transport
                == TransportAttributes(
                    iceUfrag: "shar", icePwd: "sharectlsharectlsharectl",
                    iceOptions: [.trickle], fingerprints: [local.fingerprint],
                    setup: .active))
        #expect(video.candidates == local.candidates && video.endOfCandidates)
        #expect(video.port == 40000 && video.connection == ConnectionData(address: "127.0.0.1"))
        #expect(audio.candidates.isEmpty && audio.port == 9)

        // Our tracks: msid, and SSRCs with the RTX pair.
        #expect(video.msids == [MediaStreamID(streamID: "screen", trackID: "screen-video")])
        #expect(video.ssrcGroups == [SSRCGroup(semantics: "FID", ssrcs: [1111, 2222])])
        #expect(audio.ssrcGroups.isEmpty && audio.ssrcs.map(\.ssrc) == [3333, 3333])
        #expect(answer.msidSemantic == MSIDSemantic(identifiers: ["screen"]))

        // Opus alone, with our fmtp and transport-cc.
        #expect(audio.formats == ["111"])
        #expect(
            audio.payloads == [
                PayloadFormat(
                    payloadType: 111,
                    rtpMap: RTPMap(encodingName: "opus", clockRate: 48_000, channels: 2),
                    parameters: [FormatParameter("minptime", "10"), FormatParameter("useinbandfec", "1")],
                    feedback: [.transportCC])
            ])

        // The data channel is rejected: port 0, same formats, mid kept.
        #expect(data.isRejected && data.formats == ["webrtc-datachannel"] && data.mid == "2")
        #expect(data.proto == "UDP/DTLS/SCTP")
    }

    @Test func sendOnlyAnswerToASendrecvOffer() throws {
        let (_, answer) = try self.answer("chromium-offer-sendrecv.sdp", video: .sendonly)
        #expect(answer.media[0].direction == .sendonly)
    }

    @Test func answersVP8OnlyOffer() throws {
        let (_, answer) = try self.answer("chromium-offer-no-h264.sdp")
        let video = answer.media[0]
        #expect(video.formats == ["96", "97"], "VP8 and its RTX; no VP9, AV1, RED or FEC")
        #expect(video.payloads.first?.rtpMap?.encodingName == "VP8")
        #expect(video.direction == .recvonly, "their sendonly lets us only receive")
        #expect(video.msids.isEmpty && video.ssrcs.isEmpty, "nothing of ours to describe")
        #expect(answer.media[1].direction == .recvonly)
        #expect(answer.media[1].payloads.map(\.payloadType) == [111])
    }

    @Test func answersRecvonlyViewer() throws {
        let (_, answer) = try self.answer("chromium-offer-recvonly.sdp")
        let video = answer.media[0]
        #expect(video.direction == .sendonly)
        #expect(video.payloads.first?.payloadType == 108)
        #expect(video.rtxPayloadType(for: 108) == 109)
        #expect(!video.payloads.contains { $0.parameter("profile-level-id") == "f4001f" })
        #expect(video.payload(108)?.feedback == [.remb, .transportCC, .fir, .nack, .pli])
        #expect(video.payload(109)?.feedback == [], "none on RTX")
        #expect(video.ssrcGroups == [SSRCGroup(semantics: "FID", ssrcs: [1111, 2222])])
        #expect(answer.media[1].direction == .sendonly)
    }

    @Test func rejectsWhatItCannotDo() throws {
        let offer = try SessionDescription.parse(try fixture("chromium-offer-sendrecv.sdp"))
        // No audio wanted: the audio section is rejected, the rest stays.
        let noAudio = AnswerBuilder(transport: local, origin: origin, audio: nil).answer(to: offer)
        #expect(noAudio.media.map(\.isRejected) == [false, true, true])
        #expect(noAudio.bundleGroup == .bundle(["0"]))
        // Only VP9 offered: nothing to take.
        var vp9Only = offer
        vp9Only.media[0].payloads = vp9Only.media[0].payloads.filter { $0.rtpMap?.isEncoding("VP9") == true }
        #expect(AnswerBuilder(transport: local, origin: origin).answer(to: vp9Only).media[0].isRejected)
        // No rtcp-mux, or not DTLS-SRTP.
        var noMux = offer
        noMux.media[0].rtcpMux = false
        #expect(AnswerBuilder(transport: local, origin: origin).answer(to: noMux).media[0].isRejected)
        var plainRTP = offer
        plainRTP.media[0].proto = "RTP/AVP"
        #expect(AnswerBuilder(transport: local, origin: origin).answer(to: plainRTP).media[0].isRejected)
        // A section the offer rejected stays rejected.
        var stopped = offer
        stopped.media[1].port = 0
        #expect(AnswerBuilder(transport: local, origin: origin).answer(to: stopped).media[1].isRejected)
        // Without RTX, no rtx payload types.
        var noRTX = CodecCapabilities.sharectl
        noRTX.rtx = false
        let plain = AnswerBuilder(capabilities: noRTX, transport: local, origin: origin).answer(to: offer)
        #expect(plain.media[0].formats == ["108", "116", "96"])
    }

    /// A hostile offer with 12 video and 12 audio sections (interleaved) gets the first 8 of each
    /// kind and port 0 for the rest, as JSEP rejects an m-line; sections the offer itself rejected
    /// and data sections do not count.
    @Test func aFloodOfSectionsIsCutToEightOfEachKind() throws {
        let chromium = try SessionDescription.parse(try fixture("chromium-offer-sendrecv.sdp"))
        var offer = chromium
        offer.media = []
        var stopped = chromium.media[0]
        stopped.port = 0
        stopped.mid = "stopped"
        offer.media.append(stopped)
        for index in 0..<12 {
            for template in chromium.media.prefix(2) {
                var section = template
                section.mid = "\(template.kind == .video ? "v" : "a")\(index)"
                offer.media.append(section)
            }
        }
        offer.media.append(chromium.media[2])
        offer.groups = [.bundle(offer.media.compactMap(\.mid))]
        let answer = AnswerBuilder(transport: local, origin: origin).answer(to: offer)
        #expect(answer.media.count == offer.media.count, "every section answered")
        let taken = answer.media.filter { !$0.isRejected }.compactMap(\.mid)
        #expect(taken == (0..<8).flatMap { ["v\($0)", "a\($0)"] })
        #expect(answer.media.filter { $0.isRejected && $0.mid?.hasPrefix("v") == true }.count == 4)
        #expect(answer.bundleGroup == .bundle(taken))
        #expect(SectionLimit.sharectl == SectionLimit(audio: 8, video: 8))
        let oneAudio = SectionLimit(audio: 1, video: 0).admitted(offer)
        #expect(oneAudio.indices.filter { !oneAudio[$0] } == Array(1..<25).filter { $0 != 2 }, "only a0 of the 24")
    }

    @Test func directionRules() {
        let table: [(offered: MediaDirection, wanted: MediaDirection, answer: MediaDirection)] = [
            (.sendrecv, .sendrecv, .sendrecv),
            (.sendonly, .sendrecv, .recvonly),  // they send: we may only receive
            (.recvonly, .sendrecv, .sendonly),  // they receive: we may only send
            (.inactive, .sendrecv, .inactive),
            (.sendrecv, .sendonly, .sendonly),
            (.sendonly, .sendonly, .inactive),  // both want to send only
            (.recvonly, .recvonly, .inactive)
        ]
        for row in table {
            #expect(MediaDirection.answering(row.offered, wanting: row.wanted) == row.answer, "\(row)")
        }
        #expect(MediaDirection.sendonly.reversed == .recvonly)
    }

    @Test func ourOffer() throws {
        var transport = local
        transport.setup = .actpass
        let offer = OfferBuilder(transport: transport, origin: origin, videoTrack: videoTrack, audioTrack: audioTrack)
            .offer()
        try expectFixedPoint(offer)
        #expect(offer.bundleGroup == .bundle(["0", "1"]))
        let video = offer.media[0], audio = offer.media[1]
        #expect(video.kind == .video && video.direction == .sendonly && video.transport.setup == .actpass)
        #expect(video.formats == ["96", "97", "98", "99"])
        #expect(video.payload(96)?.rtpMap == RTPMap(encodingName: "H264", clockRate: 90_000))
        #expect(
            video.payload(96)?.parameters == [
                FormatParameter("level-asymmetry-allowed", "1"),
                FormatParameter("packetization-mode", "1"),
                FormatParameter("profile-level-id", "42e01f")
            ])
        #expect(video.rtxPayloadType(for: 96) == 97)
        #expect(video.payload(98)?.rtpMap?.encodingName == "VP8")
        #expect(video.rtxPayloadType(for: 98) == 99)
        #expect(
            video.extensions == [
                ExtensionMap(id: 1, uri: ExtensionMap.sdesMid),
                ExtensionMap(id: 2, uri: ExtensionMap.absSendTime),
                ExtensionMap(id: 3, uri: ExtensionMap.transportWideCC)
            ])
        #expect(video.ssrcGroups == [SSRCGroup(semantics: "FID", ssrcs: [1111, 2222])])
        #expect(audio.direction == .sendonly && audio.formats == ["111"])
        #expect(audio.payload(111)?.parameter("useinbandfec") == "1")

        // What a receiver answers to it: H.264 Constrained Baseline and Opus.
        let receiver = AnswerBuilder(transport: local, origin: origin, video: .recvonly, audio: .recvonly)
        let answer = receiver.answer(to: try SessionDescription.parse(offer.serialize()))
        #expect(answer.media[0].direction == .recvonly)
        #expect(answer.media[0].formats == ["96", "97", "98", "99"])
        #expect(answer.media[1].formats == ["111"])

        // The text starts the way a browser's does.
        let text = offer.serialize()
        #expect(text.hasPrefix("v=0\r\no=- 1234567890 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\n"))
        #expect(text.contains("\r\nm=video 40000 UDP/TLS/RTP/SAVPF 96 97 98 99\r\nc=IN IP4 127.0.0.1\r\n"))
    }

    @Test func vp8PreferredOffer() {
        var caps = CodecCapabilities.sharectl
        caps.videoCodecs = [.vp8, .h264]
        let offer = OfferBuilder(capabilities: caps, transport: local, origin: origin, audio: nil).offer()
        #expect(offer.media.count == 1)
        #expect(offer.media[0].payload(96)?.rtpMap?.encodingName == "VP8")
        #expect(offer.media[0].payload(98)?.rtpMap?.encodingName == "H264")
    }
}
