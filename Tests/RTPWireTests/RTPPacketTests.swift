import RTPWire
import ShareCore
import Testing

@Suite struct RTPPacketTests {
    /// An Opus-like packet with CSRCs and 3 bytes of padding, sequence number at the wrap.
    let padded: [UInt8] = [
        0xA2, 0x6F, 0xFF, 0xFF,  // V=2 P=1 X=0 CC=2, M=0 PT=111, seq=65535
        0x00, 0x00, 0x03, 0xC0,  // timestamp 960
        0x11, 0x22, 0x33, 0x44,  // SSRC
        0x00, 0x00, 0x00, 0x0A,  // CSRC 1
        0x00, 0x00, 0x00, 0x0B,  // CSRC 2
        0xFC, 0xFF,  // payload
        0x00, 0x00, 0x03
    ]  // padding, count=3

    @Test func parsesFixedHeaderCSRCsAndPadding() throws {
        let packet = try RTPPacket.parse(padded)
        #expect(packet.marker == false)
        #expect(packet.payloadType == 111)
        #expect(packet.sequenceNumber == 65535)
        #expect(packet.timestamp == 960)
        #expect(packet.ssrc == 0x1122_3344)
        #expect(packet.csrcs == [10, 11])
        #expect(packet.headerExtension == nil)
        #expect(packet.payload == [0xFC, 0xFF])
        #expect(packet.paddingSize == 3)
        #expect(try packet.serialize() == padded)
        #expect(packet.serializedSize == padded.count)
    }

    @Test func buildsTheSameBytes() throws {
        let packet = RTPPacket(
            payloadType: 111, sequenceNumber: 65535, timestamp: 960, ssrc: 0x1122_3344, csrcs: [10, 11],
            payload: [0xFC, 0xFF], paddingSize: 3)
        #expect(try packet.serialize() == padded)
    }

    @Test func minimalPacketHasEmptyPayload() throws {
        let bytes: [UInt8] = [
            0x80, 0xE0, 0x00, 0x01,  // V=2, M=1 PT=96, seq=1
            0x00, 0x00, 0x00, 0x00,  // timestamp
            0x00, 0x00, 0x00, 0x01
        ]  // SSRC
        let packet = try RTPPacket.parse(bytes)
        #expect(packet.marker)
        #expect(packet.payloadType == 96)
        #expect(packet.payload.isEmpty)
        #expect(try packet.serialize() == bytes)
    }

    /// RTP has no length field: the datagram is the packet. Every prefix that cuts the header,
    /// CSRC list or padding throws; every prefix inside the payload is a shorter valid packet.
    @Test func parseFedOneByteAtATime() throws {
        let unpadded: [UInt8] = Array(padded[0..<22]).replacing([0xA2], with: [0x82], maxReplacements: 1)
        for end in 0..<unpadded.count {
            let prefix = Array(unpadded[0..<end])
            if end < 20 {
                #expect(throws: WireError.self, "prefix of \(end) bytes") { try RTPPacket.parse(prefix) }
            } else {
                #expect(try RTPPacket.parse(prefix).payload == Array(unpadded[20..<end]))
            }
        }
        let withExtension = RTPHeaderExtensionTests.oneByteExample
        for end in 0..<28 {
            #expect(throws: WireError.self, "prefix of \(end) bytes") {
                try RTPPacket.parse(Array(withExtension[0..<end]))
            }
        }
    }

    @Test(
        arguments: [
            // Too short for the fixed header.
            ([0x80, 0x60, 0x00], WireError.truncated(what: "rtp: header", got: 3, need: 12)),
            // Version 1.
            (
                [0x40, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1],
                WireError.invalid(what: "rtp: version", reason: "expected 2, got 1")
            ),
            // CC=1 but no CSRC follows.
            (
                [0x81, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA],
                WireError.truncated(what: "rtp: CSRC list", got: 1, need: 4)
            ),
            // X=1, extension length 1 word, but no data.
            (
                [0x90, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0x00, 0x01],
                WireError.truncated(what: "rtp: header extension data", got: 0, need: 4)
            ),
            // P=1 with a padding count of 0.
            (
                [0xA0, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA, 0x00],
                WireError.invalid(what: "rtp: padding", reason: "padding bit set but padding count is 0")
            ),
            // P=1 with a padding count longer than what follows the header.
            (
                [0xA0, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA, 0x03],
                WireError.invalid(
                    what: "rtp: padding", reason: "padding count 3 is longer than the 2 bytes after the header")
            ),
            // P=1 and nothing after the header.
            (
                [0xA0, 0x60, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1],
                WireError.truncated(what: "rtp: padding", got: 0, need: 1)
            )
        ] as [([UInt8], WireError)])
    func refusesMalformedPackets(bytes: [UInt8], error: WireError) {
        #expect(throws: error) { try RTPPacket.parse(bytes) }
    }

    @Test func errorsReadWell() {
        #expect(
            WireError.truncated(what: "rtp: header", got: 3, need: 12).description
                == "rtp: header too short (got 3 bytes, need 12)")
        #expect(
            WireError.invalid(what: "rtp: version", reason: "expected 2, got 1").description
                == "rtp: version: expected 2, got 1")
    }

    @Test func refusesToSerializeWhatDoesNotFit() {
        let tooManyCSRCs = RTPPacket(
            payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0, csrcs: Array(0..<16), payload: [])
        #expect(throws: WireError.self) { try tooManyCSRCs.serialize() }
        let wideType = RTPPacket(payloadType: 128, sequenceNumber: 0, timestamp: 0, ssrc: 0, payload: [])
        #expect(throws: WireError.self) { try wideType.serialize() }
    }

    @Test func roundTripsManyShapes() throws {
        for csrcCount in [0, 1, 15] {
            for padding in [0, 1, 4, 255] as [UInt8] {
                for hasExtension in [false, true] {
                    let packet = RTPPacket(
                        marker: padding % 2 == 0, payloadType: 100, sequenceNumber: 40000,
                        timestamp: 0xFFFF_FFFF, ssrc: 0xCAFE_BABE, csrcs: (0..<UInt32(csrcCount)).map { $0 * 7 },
                        headerExtension: hasExtension ? RTPHeaderExtension(profile: 0xABCD, data: [1, 2, 3, 4]) : nil,
                        payload: Array(repeating: 0x5A, count: 33), paddingSize: padding)
                    #expect(try RTPPacket.parse(packet.serialize()) == packet)
                }
            }
        }
    }

    @Test(
        arguments: [
            ([0x80, 0xC8], RTPDemux.Kind.rtcp),  // SR, 200
            ([0x81, 0xC9], .rtcp),  // RR, 201
            ([0x8F, 0xCE], .rtcp),  // PSFB, 206
            ([0x80, 0xDF], .rtcp),  // 223, top of the RTCP range
            ([0x80, 0x60], .rtp),  // PT=96
            ([0x80, 0xE0], .rtp),  // PT=96 with marker
            ([0x80, 0x00], .rtp),  // PT=0 (PCMU)
            ([0x80, 0xBF], .rtp),  // PT=63 with marker (191)
            ([0x80, 0xE0 + 0x00], .rtp)
        ] as [([UInt8], RTPDemux.Kind)])
    func classifiesForRTCPMux(bytes: [UInt8], kind: RTPDemux.Kind) {
        #expect(RTPDemux.classify(bytes) == kind)
        #expect(RTPDemux.isRTCP(bytes) == (kind == .rtcp))
    }

    @Test func classifiesNothingFromShortOrForeignBytes() {
        #expect(RTPDemux.classify([UInt8]()) == nil)
        #expect(RTPDemux.classify([0x80]) == nil)
        #expect(RTPDemux.classify([0x00, 0xC8]) == nil, "version 0 (STUN-like) is not RTP/RTCP")
        #expect(RTPDemux.isRTCP([0x16, 0xFE, 0xFD]) == false, "DTLS")
        #expect(RTPDemux.isRTCP(padded[0...]) == false, "works on slices")
    }
}

/// Checks that every strict prefix of `bytes` is refused with a `WireError` (and never crashes).
func expectEveryStrictPrefixThrows<T>(
    _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation,
    _ parse: ([UInt8]) throws(WireError) -> T
) {
    for end in 0..<bytes.count {
        let prefix = Array(bytes[0..<end])
        #expect(throws: WireError.self, "prefix of \(end) bytes", sourceLocation: sourceLocation) {
            _ = try parse(prefix)
        }
    }
}
