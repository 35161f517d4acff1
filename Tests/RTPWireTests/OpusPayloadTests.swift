import RTPWire
import ShareCore
import Testing

@Suite struct OpusPacketInfoTests {
    @Test func readsTheTOCByte() {
        let toc = OpusTOC(
            0xFC)  // config 31 (CELT fullband 20 ms), s=1 stereo, c=0 one frame
        #expect(toc.configuration == 31 && toc.isStereo && toc.frameCountCode == 0)
        #expect(toc.mode == .celt && toc.bandwidth == .fullband)
        #expect(toc.samplesPerFrame == 960 && toc.frameDuration == .milliseconds(20))

        let silk = OpusTOC(
            0x0B)  // config 1 (SILK narrowband 20 ms), mono, c=3
        #expect(silk.mode == .silk && silk.bandwidth == .narrowband && silk.samplesPerFrame == 960)
        #expect(silk.frameCountCode == 3)
        #expect(OpusTOC(0x78).mode == .hybrid)  // config 15: hybrid fullband 20 ms
        #expect(OpusTOC(0x78).samplesPerFrame == 960)
        #expect(OpusTOC(0x80).frameDuration == .microseconds(2500))  // config 16: CELT narrowband 2.5 ms
        #expect(OpusTOC(0x18).samplesPerFrame == 2880)  // config 3: SILK 60 ms
    }

    @Test func countsFramesForEachPacking() throws {
        #expect(try OpusPacketInfo(packet: [0xFC]).frameCount == 1)  // c=0, empty frame (DTX)
        #expect(try OpusPacketInfo(packet: [0xFD, 1, 2]).frameCount == 2)  // c=1, two 1-byte frames
        #expect(try OpusPacketInfo(packet: [0xFE, 1, 9, 8, 7]).frameCount == 2)  // c=2, first frame 1 byte
        let code3: [UInt8] = [
            0x0B,  // config 1 (SILK NB 20 ms), c=3
            0xC3,  // v=1 (VBR) p=1 (padding), M=3 frames
            0x02,  // 2 bytes of padding
            0x01, 0x02,  // frame lengths 1 and 2; the third is the rest
            0xA, 0xB, 0xB, 0xC, 0xC, 0xC,
            0x00, 0x00
        ]  // padding
        let info = try OpusPacketInfo(packet: code3)
        #expect(info.frameCount == 3 && info.duration == .milliseconds(60) && info.sampleCount == 2880)
    }

    @Test func refusesMalformedPackets() {
        let cases: [([UInt8], WireError)] = [
            ([], .truncated(what: "opus: packet (TOC byte)", got: 0, need: 1)),
            (
                [0xFD, 1, 2, 3],
                .invalid(what: "opus: code 1 packet", reason: "two equal frames need an even length (3 bytes)")
            ),
            ([0xFE], .truncated(what: "opus: frame length", got: 0, need: 1)),
            ([0xFE, 5, 1], .truncated(what: "opus: code 2 first frame", got: 1, need: 5)),
            ([0xFF], .truncated(what: "opus: code 3 frame count", got: 0, need: 1)),
            ([0xFF, 0x00], .invalid(what: "opus: code 3 packet", reason: "frame count is 0")),
            (
                [0x1B, 0x03],  // config 3 (60 ms) × 3 frames
                .invalid(what: "opus: code 3 packet", reason: "3 frames of 2880 samples exceed 120 ms (5760 samples)")
            ),
            (
                [0xFF, 0x02, 1, 2, 3],
                .invalid(what: "opus: code 3 CBR packet", reason: "3 bytes do not split into 2 equal frames")
            ),
            ([0xFF, 0x42, 0x05, 1], .truncated(what: "opus: code 3 frames and padding", got: 1, need: 5)),
            (
                [0xFC] + [UInt8](repeating: 0, count: 1276),
                .invalid(what: "opus: frame", reason: "1276 bytes exceed the 1275-byte limit")
            )
        ]
        for (packet, error) in cases {
            #expect(throws: error, "\(packet.prefix(6))") { try OpusPacketInfo(packet: packet) }
        }
    }
}

@Suite struct OpusPayloadTests {
    @Test func onePacketPerPayload() throws {
        let payloader = OpusPayloader()
        let packet: [UInt8] = [0x78, 0x01, 0x02, 0x03]
        #expect(try payloader.payload(packet) == RTPPayloadUnit(payload: packet, marker: false))
        #expect(try payloader.payload(packet, startsTalkspurt: true).marker)
        #expect(
            throws: WireError.invalid(what: "opus: packet", reason: "empty (an Opus packet has at least its TOC byte)")
        ) {
            try payloader.payload([])
        }
        #expect(throws: WireError.self) { try OpusPayloader(maxPayloadSize: 3).payload(packet) }
    }

    @Test func depayloaderReportsGapsForConcealment() throws {
        var depayloader = OpusDepayloader()
        #expect(try depayloader.push([0x78, 1], sequenceNumber: 65535, timestamp: 0, marker: false).count == 1)
        let events = try depayloader.push([0x78, 2], sequenceNumber: 2, timestamp: 2880, marker: false)
        #expect(
            events == [
                .gap(after: 65535, missing: 2),
                .frame(
                    DepayloadedFrame(
                        bytes: [0x78, 2], isKeyframe: true, timestamp: 2880,
                        firstSequenceNumber: 2, lastSequenceNumber: 2))
            ])
        #expect(try depayloader.push([0x78, 1], sequenceNumber: 1, timestamp: 1920, marker: false).isEmpty)  // late
        #expect(throws: WireError.truncated(what: "opus: RTP payload", got: 0, need: 1)) {
            try depayloader.push([], sequenceNumber: 3, timestamp: 3840, marker: false)
        }
        // Far behind: the sender restarted its numbering, so the packet is taken.
        #expect(try depayloader.push([0x78, 3], sequenceNumber: 60_000, timestamp: 0, marker: false).count == 1)
    }
}
