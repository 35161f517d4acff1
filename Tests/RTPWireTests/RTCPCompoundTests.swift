import RTPWire
import ShareCore
import Testing

@Suite struct RTCPCompoundTests {
    typealias Report = RTCPReportTests
    typealias Feedback = RTCPFeedbackTests

    static let application: [UInt8] = [
        0x80, 0xCC, 0x00, 0x03,  // V=2 P=0 subtype=0, PT=204 APP, length=3 (16 bytes)
        0x00, 0x00, 0x00, 0x01,  // SSRC
        0x71, 0x6F, 0x73, 0x31,  // name "qos1"
        0xDE, 0xAD, 0xBE, 0xEF
    ]  // application data

    @Test func senderReportSourceDescriptionGoodbye() throws {
        let compound = Report.senderReport + Report.sourceDescription + Report.goodbye
        let packets = try RTCPCompound.parse(compound)
        #expect(
            packets == [
                .senderReport(try SenderReport.parse(Report.senderReport)),
                .sourceDescription(try SourceDescription.parse(Report.sourceDescription)),
                .goodbye(try Goodbye.parse(Report.goodbye))
            ])
        #expect(try RTCPCompound.serialize(packets) == compound)
    }

    @Test func receiverReportWithEveryFeedbackType() throws {
        let compound =
            Report.receiverReport + Report.sourceDescription + Feedback.pictureLossIndication
            + Feedback.fullIntraRequest + Feedback.genericNACK + Feedback.receiverEstimatedMaxBitrate
            + Feedback.transportWideFeedback
        let packets = try RTCPCompound.parse(compound)
        #expect(packets.count == 7)
        guard case .receiverReport = packets[0], case .sourceDescription = packets[1],
            case .pictureLossIndication = packets[2], case .fullIntraRequest = packets[3],
            case .genericNACK = packets[4], case .receiverEstimatedMaxBitrate = packets[5],
            case let .transportWideFeedback(feedback) = packets[6]
        else {
            Issue.record("unexpected packet kinds: \(packets)")
            return
        }
        #expect(feedback.statuses == Feedback.transportWideStatuses)
        #expect(try RTCPCompound.serialize(packets) == compound)
    }

    /// Every strict prefix throws, except those ending exactly on a packet boundary, which are
    /// valid compounds of the packets before it.
    @Test func parseFedOneByteAtATime() throws {
        let parts = [Report.receiverReport, Report.sourceDescription, Feedback.transportWideFeedback]
        let compound = parts.flatMap { $0 }
        var boundaries: [Int: Int] = [:]  // end offset → packets before it
        var end = 0
        for (index, part) in parts.enumerated() {
            end += part.count
            boundaries[end] = index + 1
        }
        for length in 0..<compound.count {
            let prefix = Array(compound[0..<length])
            if let count = boundaries[length] {
                #expect(try RTCPCompound.parse(prefix).count == count)
            } else {
                #expect(throws: WireError.self, "prefix of \(length) bytes") { try RTCPCompound.parse(prefix) }
            }
        }
    }

    @Test func unknownPacketsAreKept() throws {
        // An APP packet, and PSFB FMT=15 whose identifier is not "REMB".
        var notREMB = Feedback.receiverEstimatedMaxBitrate
        notREMB[12...15] = [0x41, 0x42, 0x43, 0x44]  // "ABCD"
        let compound = Report.receiverReport + Self.application + notREMB
        let packets = try RTCPCompound.parse(compound)
        #expect(
            packets == [
                .receiverReport(try ReceiverReport.parse(Report.receiverReport)),
                .unknown(packetType: 204, bytes: Self.application),
                .unknown(packetType: 206, bytes: notREMB)
            ])
        #expect(try RTCPCompound.serialize(packets) == compound)
    }

    @Test func paddingOnTheLastPacketIsRemoved() throws {
        let paddedApp: [UInt8] = [
            0xA0, 0xCC, 0x00, 0x04,  // V=2 P=1, PT=204 APP, length=4 (20 bytes)
            0x00, 0x00, 0x00, 0x01,  // SSRC
            0x71, 0x6F, 0x73, 0x31,  // name
            0xDE, 0xAD, 0xBE, 0xEF,  // data
            0x00, 0x00, 0x00, 0x04
        ]  // padding, count=4
        let packets = try RTCPCompound.parse(Report.receiverReport + paddedApp)
        #expect(packets.last == .unknown(packetType: 204, bytes: Self.application))
        #expect(try RTCPPacket.parse(paddedApp) == .unknown(packetType: 204, bytes: Self.application))
    }

    @Test func refusesAPacketRunningPastTheBuffer() {
        // The SDES says 36 bytes but only 20 arrive.
        let cut = Report.receiverReport + Report.sourceDescription[0..<20]
        let error = WireError.truncated(what: "rtcp: packet 2 (type 202)", got: 20, need: 36)
        #expect(throws: error) { try RTCPCompound.parse(cut) }
        #expect(error.description == "rtcp: packet 2 (type 202) too short (got 20 bytes, need 36)")
        // A trailing fragment shorter than a header.
        #expect(throws: WireError.truncated(what: "rtcp: packet 2", got: 3, need: 4)) {
            try RTCPCompound.parse(Report.receiverReport + [0x80, 0xC9, 0x00])
        }
        #expect(throws: WireError.truncated(what: "rtcp: packet", got: 0, need: 4)) {
            try RTCPCompound.parse([])
        }
    }

    @Test func refusesWrongVersion() {
        var version1 = Report.receiverReport
        version1[0] = 0x41
        #expect(throws: WireError.invalid(what: "rtcp: packet version", reason: "expected 2, got 1")) {
            try RTCPCompound.parse(version1)
        }
        var secondIsVersion0 = Report.sourceDescription
        secondIsVersion0[0] &= 0x3F
        #expect(throws: WireError.invalid(what: "rtcp: packet 2 version", reason: "expected 2, got 0")) {
            try RTCPCompound.parse(Report.receiverReport + secondIsVersion0)
        }
    }

    @Test func acceptsPaddingOnAPacketThatIsNotTheLast() throws {
        // libwebrtc pads feedback wherever it sits in a compound; the length covers the padding.
        let paddedPLI: [UInt8] = [
            0xA1, 0xCE, 0x00, 0x03,  // v=2 P=1 FMT=1, PT=206 PSFB, length=3 (two SSRCs + one padding word)
            0x00, 0x00, 0x00, 0x01,  // sender SSRC
            0x00, 0x00, 0x00, 0x02,  // media SSRC
            0x00, 0x00, 0x00, 0x04
        ]  // padding, count 4
        let packets = try RTCPCompound.parse(paddedPLI + Report.receiverReport)
        #expect(packets.count == 2)
        #expect(packets.first == .pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 2)))
    }

    @Test func refusesBadPadding() {
        // Padding count 0.
        var zeroCount = Feedback.pictureLossIndication
        zeroCount[0] |= 0x20
        zeroCount[11] = 0
        #expect(
            throws: WireError.invalid(what: "rtcp: packet padding", reason: "padding bit set but padding count is 0")
        ) {
            try RTCPCompound.parse(zeroCount)
        }
        // Padding count larger than the body.
        var tooMuch = Feedback.pictureLossIndication
        tooMuch[0] |= 0x20
        tooMuch[11] = 9
        #expect(
            throws: WireError.invalid(
                what: "rtcp: packet padding", reason: "padding count 9 is longer than the 8-byte body")
        ) {
            try RTCPCompound.parse(tooMuch)
        }
        // Padding that eats into the fixed fields leaves the PLI short.
        var eatsSSRC = Feedback.pictureLossIndication
        eatsSSRC[0] |= 0x20
        eatsSSRC[11] = 4
        #expect(throws: WireError.truncated(what: "rtcp: PLI", got: 0, need: 4)) {
            try RTCPCompound.parse(eatsSSRC)
        }
    }

    @Test func singlePacketParseAndSerialize() throws {
        for bytes in [
            Report.senderReport, Report.receiverReport, Report.sourceDescription, Report.goodbye,
            Feedback.pictureLossIndication, Feedback.fullIntraRequest, Feedback.genericNACK,
            Feedback.receiverEstimatedMaxBitrate, Feedback.transportWideFeedback, Self.application
        ] {
            let packet = try RTCPPacket.parse(bytes)
            #expect(try packet.serialize() == bytes)
            expectEveryStrictPrefixThrows(bytes) { bytes throws(WireError) in try RTCPPacket.parse(bytes) }
        }
    }

    @Test func unknownBytesMustBeOneUnpaddedPacket() {
        #expect(throws: WireError.self) { try RTCPPacket.unknown(packetType: 204, bytes: [0x80, 0xCC]).serialize() }
        #expect(throws: WireError.self) {
            try RTCPPacket.unknown(packetType: 204, bytes: Self.application + [0, 0, 0, 0]).serialize()
        }
        #expect(throws: WireError.self) {
            try RTCPPacket.unknown(packetType: 205, bytes: Self.application).serialize()
        }
    }
}
