import RTPWire
import ShareCore
import Testing

@Suite struct RTCPReportTests {
    static let senderReport: [UInt8] = [
        0x81, 0xC8, 0x00, 0x0C,  // V=2 P=0 RC=1, PT=200 SR, length=12 (52 bytes)
        0x12, 0x34, 0x56, 0x78,  // SSRC of sender
        0xE8, 0x3E, 0x9B, 0x40,  // NTP timestamp, seconds
        0x80, 0x00, 0x00, 0x00,  // NTP timestamp, fraction (0.5 s)
        0x00, 0x0B, 0xB8, 0x00,  // RTP timestamp 768000
        0x00, 0x00, 0x00, 0x64,  // sender's packet count 100
        0x00, 0x01, 0x86, 0xA0,  // sender's octet count 100000
        0x9A, 0xBC, 0xDE, 0xF0,  // report block: SSRC_1
        0x19, 0xFF, 0xFF, 0xFE,  //   fraction lost 25/256, cumulative lost -2 (24-bit signed)
        0x00, 0x01, 0x00, 0x05,  //   extended highest seq: 1 cycle, seq 5
        0x00, 0x00, 0x00, 0x20,  //   interarrival jitter 32
        0x9B, 0x40, 0x80, 0x00,  //   LSR (middle 32 bits of the NTP timestamp above)
        0x00, 0x01, 0x00, 0x00
    ]  //   DLSR 1 s (65536/65536)

    static let receiverReport: [UInt8] = [
        0x81, 0xC9, 0x00, 0x07,  // V=2 P=0 RC=1, PT=201 RR, length=7 (32 bytes)
        0x00, 0x00, 0x00, 0x01,  // SSRC of packet sender
        0x12, 0x34, 0x56, 0x78,  // report block: SSRC_1
        0x00, 0x00, 0x01, 0x23,  //   fraction lost 0, cumulative lost 291
        0x00, 0x00, 0xFF, 0xFF,  //   extended highest seq 65535
        0x00, 0x00, 0x01, 0x00,  //   jitter 256
        0x00, 0x00, 0x00, 0x00,  //   LSR: no SR yet
        0x00, 0x00, 0x00, 0x00
    ]  //   DLSR

    static let sourceDescription: [UInt8] = [
        0x82, 0xCA, 0x00, 0x08,  // V=2 P=0 SC=2, PT=202 SDES, length=8 (36 bytes)
        0x12, 0x34, 0x56, 0x78,  // chunk 1: SSRC
        0x01, 0x0D, 0x73, 0x68,  //   CNAME, length 13: "sh
        0x61, 0x72, 0x65, 0x63,  //   arec
        0x74, 0x6C, 0x40, 0x68,  //   tl@h
        0x6F, 0x73, 0x74, 0x00,  //   ost" | END
        0x9A, 0xBC, 0xDE, 0xF0,  // chunk 2: SSRC
        0x01, 0x02, 0x61, 0x62,  //   CNAME, length 2: "ab"
        0x00, 0x00, 0x00, 0x00
    ]  //   END + 3 nulls to the boundary

    static let goodbye: [UInt8] = [
        0x81, 0xCB, 0x00, 0x03,  // V=2 P=0 SC=1, PT=203 BYE, length=3 (16 bytes)
        0x12, 0x34, 0x56, 0x78,  // SSRC
        0x06, 0x63, 0x6C, 0x6F,  // reason length 6: "clo
        0x73, 0x65, 0x64, 0x00
    ]  //   sed" | padding

    @Test func senderReport() throws {
        let report = try SenderReport.parse(Self.senderReport)
        #expect(report.ssrc == 0x1234_5678)
        #expect(report.ntpTimestamp == NTPTimestamp(seconds: 0xE83E_9B40, fraction: 0x8000_0000))
        #expect(report.rtpTimestamp == 768_000)
        #expect(report.packetCount == 100)
        #expect(report.octetCount == 100_000)
        #expect(
            report.reports == [
                ReceptionReport(
                    ssrc: 0x9ABC_DEF0, fractionLost: 25, cumulativeLost: -2, extendedHighestSequenceNumber: 0x1_0005,
                    jitter: 32, lastSenderReport: 0x9B40_8000, delaySinceLastSenderReport: 65536)
            ])
        #expect(report.reports[0].lastSenderReport == report.ntpTimestamp.compact)
        #expect(report.profileExtensions.isEmpty)
        #expect(try report.serialize() == Self.senderReport)
        expectEveryStrictPrefixThrows(Self.senderReport) { bytes throws(WireError) in try SenderReport.parse(bytes) }
    }

    @Test func receiverReport() throws {
        let report = try ReceiverReport.parse(Self.receiverReport)
        #expect(
            report
                == ReceiverReport(
                    ssrc: 1,
                    reports: [
                        ReceptionReport(
                            ssrc: 0x1234_5678, cumulativeLost: 291, extendedHighestSequenceNumber: 65535, jitter: 256)
                    ]))
        #expect(try report.serialize() == Self.receiverReport)
        expectEveryStrictPrefixThrows(Self.receiverReport) { bytes throws(WireError) in try ReceiverReport.parse(bytes)
        }
    }

    @Test func receiverReportWithoutBlocks() throws {
        let empty: [UInt8] = [
            0x80, 0xC9, 0x00, 0x01,  // RC=0, PT=201, length=1
            0x00, 0x00, 0x00, 0x02
        ]  // SSRC
        #expect(try ReceiverReport.parse(empty) == ReceiverReport(ssrc: 2))
        #expect(try ReceiverReport(ssrc: 2).serialize() == empty)
    }

    @Test func cumulativeLostIsClampedTo24Bits() throws {
        let report = ReceiverReport(
            ssrc: 1,
            reports: [
                ReceptionReport(ssrc: 2, cumulativeLost: 10_000_000, extendedHighestSequenceNumber: 0),
                ReceptionReport(ssrc: 3, cumulativeLost: -10_000_000, extendedHighestSequenceNumber: 0)
            ])
        let parsed = try ReceiverReport.parse(report.serialize())
        #expect(parsed.reports.map(\.cumulativeLost) == [0x7F_FFFF, -0x80_0000])
    }

    @Test func ntpTimestampFromDuration() {
        let ntp = NTPTimestamp(sinceEpoch: .seconds(3_896_417_088) + .milliseconds(500))
        #expect(ntp == NTPTimestamp(seconds: 0xE83E_9B40, fraction: 0x8000_0000))
        #expect(ntp.compact == 0x9B40_8000)
        #expect(ntp.sinceEpoch == .seconds(3_896_417_088) + .milliseconds(500))
        #expect(NTPTimestamp(sinceEpoch: .seconds(-1)).rawValue == 0)
    }

    @Test func sourceDescription() throws {
        let sdes = try SourceDescription.parse(Self.sourceDescription)
        #expect(
            sdes.chunks == [
                SourceDescription.Chunk(source: 0x1234_5678, items: [.init(type: .cname, text: "sharectl@host")]),
                SourceDescription.Chunk(source: 0x9ABC_DEF0, items: [.init(type: .cname, text: "ab")])
            ])
        #expect(sdes.chunks[0].items[0].text == "sharectl@host")
        #expect(try sdes.serialize() == Self.sourceDescription)
        expectEveryStrictPrefixThrows(Self.sourceDescription) { bytes throws(WireError) in
            try SourceDescription.parse(bytes)
        }
    }

    @Test func sourceDescriptionChunkAlignment() throws {
        // Items of 2+2 bytes end on a boundary, so the END byte takes a whole word of nulls;
        // a chunk with no items is its SSRC and one word of nulls.
        let sdes = SourceDescription(chunks: [
            .init(source: 1, items: [.init(type: .tool, text: "xy")]),
            .init(source: 2, items: []),
            .init(source: 3, items: [.init(type: .cname, text: "a"), .init(type: .note, text: "")])
        ])
        let bytes = try sdes.serialize()
        #expect(
            bytes == [
                0x83, 0xCA, 0x00, 0x08,  // SC=3, PT=202, length=8
                0x00, 0x00, 0x00, 0x01,  // chunk 1 SSRC
                0x06, 0x02, 0x78, 0x79,  //   TOOL "xy"
                0x00, 0x00, 0x00, 0x00,  //   END + nulls
                0x00, 0x00, 0x00, 0x02,  // chunk 2 SSRC
                0x00, 0x00, 0x00, 0x00,  //   END + nulls
                0x00, 0x00, 0x00, 0x03,  // chunk 3 SSRC
                0x01, 0x01, 0x61, 0x07,  //   CNAME "a" | NOTE
                0x00, 0x00, 0x00, 0x00
            ])  //   length 0 | END + nulls
        #expect(try SourceDescription.parse(bytes) == sdes)
    }

    @Test func sourceDescriptionRefusesMissingEnd() {
        let noEnd: [UInt8] = [
            0x81, 0xCA, 0x00, 0x02,  // SC=1, PT=202, length=2
            0x00, 0x00, 0x00, 0x01,  // SSRC
            0x01, 0x02, 0x61, 0x62
        ]  // CNAME "ab", then the packet ends: no END byte
        #expect(throws: WireError.truncated(what: "rtcp: SDES item list (no END)", got: 0, need: 1)) {
            try SourceDescription.parse(noEnd)
        }
    }

    @Test func goodbye() throws {
        let bye = try Goodbye.parse(Self.goodbye)
        #expect(bye.sources == [0x1234_5678])
        #expect(bye.reasonText == "closed")
        #expect(try bye.serialize() == Self.goodbye)
        #expect(try Goodbye(sources: [0x1234_5678], reasonText: "closed").serialize() == Self.goodbye)
        expectEveryStrictPrefixThrows(Self.goodbye) { bytes throws(WireError) in try Goodbye.parse(bytes) }
    }

    @Test func goodbyeWithoutReason() throws {
        let bytes: [UInt8] = [
            0x82, 0xCB, 0x00, 0x02,  // SC=2, PT=203, length=2
            0x00, 0x00, 0x00, 0x01,  // SSRC
            0x00, 0x00, 0x00, 0x02
        ]  // SSRC
        let bye = try Goodbye.parse(bytes)
        #expect(bye == Goodbye(sources: [1, 2]))
        #expect(bye.reasonText == nil)
        #expect(try bye.serialize() == bytes)
    }

    @Test func refusesMalformedReports() {
        // RC=2 but only one block follows.
        var twoBlocks = Self.receiverReport
        twoBlocks[0] = 0x82
        #expect(throws: WireError.truncated(what: "rtcp: receiver report with 2 report blocks", got: 24, need: 48)) {
            try ReceiverReport.parse(twoBlocks)
        }
        // Parsing an RR as an SR.
        #expect(throws: WireError.invalid(what: "rtcp: sender report", reason: "packet type 201, expected 200")) {
            try SenderReport.parse(Self.receiverReport)
        }
        // Trailing bytes after the packet the length field describes.
        #expect(
            throws: WireError.invalid(
                what: "rtcp: goodbye", reason: "length field says 16 bytes but the buffer holds 20")
        ) {
            try Goodbye.parse(Self.goodbye + [0, 0, 0, 0])
        }
        // BYE reason longer than the packet.
        let longReason: [UInt8] = [0x81, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0x09, 0x61, 0x62, 0x63]
        #expect(throws: WireError.truncated(what: "rtcp: BYE reason", got: 3, need: 9)) {
            try Goodbye.parse(longReason)
        }
    }

    @Test func refusesToSerializeWhatDoesNotFit() {
        let blocks = (0..<32).map { ReceptionReport(ssrc: UInt32($0), extendedHighestSequenceNumber: 0) }
        #expect(
            throws: WireError.invalid(
                what: "rtcp: receiver report", reason: "count 32 does not fit 5 bits (at most 31)")
        ) {
            try ReceiverReport(ssrc: 1, reports: blocks).serialize()
        }
        #expect(throws: WireError.self) {
            try Goodbye(sources: [1], reason: Array(repeating: 0x61, count: 256)).serialize()
        }
        #expect(throws: WireError.self) {
            try SourceDescription(chunks: [
                .init(source: 1, items: [.init(type: .cname, value: Array(repeating: 1, count: 256))])
            ]).serialize()
        }
    }
}
