import RTPWire
import ShareCore
import Testing

@Suite struct RTCPFeedbackTests {
    static let pictureLossIndication: [UInt8] = [
        0x81, 0xCE, 0x00, 0x02,  // V=2 P=0 FMT=1, PT=206 PSFB, length=2
        0x00, 0x00, 0x00, 0x01,  // sender SSRC
        0x00, 0x00, 0x00, 0x02
    ]  // media SSRC

    static let fullIntraRequest: [UInt8] = [
        0x84, 0xCE, 0x00, 0x04,  // V=2 P=0 FMT=4, PT=206 PSFB, length=4 (20 bytes)
        0x00, 0x00, 0x00, 0x01,  // sender SSRC
        0x00, 0x00, 0x00, 0x00,  // media SSRC (unused by FIR)
        0x12, 0x34, 0x56, 0x78,  // FCI: SSRC of the media sender
        0x05, 0x00, 0x00, 0x00
    ]  //   seq nr 5 | reserved

    static let genericNACK: [UInt8] = [
        0x81, 0xCD, 0x00, 0x04,  // V=2 P=0 FMT=1, PT=205 RTPFB, length=4 (20 bytes)
        0x00, 0x00, 0x00, 0x01,  // sender SSRC
        0x12, 0x34, 0x56, 0x78,  // media SSRC
        0xFF, 0xFE, 0x00, 0x05,  // PID 65534 | BLP 0b101: PID+1 (65535) and PID+3 (1, wrapped)
        0x00, 0x20, 0x00, 0x00
    ]  // PID 32 | BLP 0

    static let receiverEstimatedMaxBitrate: [UInt8] = [
        0x8F, 0xCE, 0x00, 0x05,  // V=2 P=0 FMT=15, PT=206 PSFB, length=5 (24 bytes)
        0x00, 0x00, 0x00, 0x01,  // sender SSRC
        0x00, 0x00, 0x00, 0x00,  // media SSRC (unused)
        0x52, 0x45, 0x4D, 0x42,  // "REMB"
        0x01, 0x0E, 0xDC, 0x6C,  // 1 SSRC | exp 3, mantissa 187500 (0x2DC6C): 1.5 Mbit/s
        0x12, 0x34, 0x56, 0x78
    ]  // SSRC feedback

    /// Covers all three chunk kinds and both delta sizes, base sequence number at the wrap.
    static let transportWideFeedback: [UInt8] = [
        0x8F, 0xCD, 0x00, 0x0B,  // V=2 P=0 FMT=15, PT=205 RTPFB, length=11 (48 bytes)
        0x00, 0x00, 0x00, 0x01,  // sender SSRC
        0x12, 0x34, 0x56, 0x78,  // media SSRC
        0xFF, 0xFA, 0x00, 0x18,  // base seq 65530 | packet status count 24
        0x00, 0x0A, 0xBC, 0x05,  // reference time 2748 (× 64 ms = 175.872 s) | fb pkt count 5
        0x20, 0x07,  // run length chunk: T=0 S=01 (small delta) run=7    → packets 0–6
        0x9B, 0xCE,  // 1-bit vector: T=1 S=0 01101111001110            → packets 7–20
        0xE6, 0x00,  // 2-bit vector: T=1 S=1 10 01 10 00 00 00 00       → packets 21–23
        0x04, 0x10, 0x14, 0x00,  // small deltas (250 µs): 1 ms, 4 ms, 5 ms, 0 ms
        0x28, 0x14, 0xFF,  //   10 ms, 5 ms, 63.75 ms                          (run, 7)
        0x08, 0x0C, 0x14, 0x14,  //   2 ms, 3 ms, 5 ms, 5 ms
        0x18, 0x10, 0x14, 0x14,  //   6 ms, 4 ms, 5 ms, 5 ms
        0x20,  //   8 ms                                         (vector, 9)
        0x01, 0x90,  // large delta: +400 = 100 ms
        0x08,  // small delta: 2 ms
        0xFF, 0xFC,  // large delta: -4 = -1 ms (arrived before the previous one)
        0x00
    ]  // zero padding to 32 bits

    static let transportWideStatuses: [TransportWideFeedback.PacketStatus] = {
        let r = TransportWideFeedback.PacketStatus.received(delta:)
        let lost = TransportWideFeedback.PacketStatus.notReceived
        return [
            r(4), r(16), r(20), r(0), r(40), r(20), r(255),
            lost, r(8), r(12), lost, r(20), r(20), r(24), r(16), lost, lost, r(20), r(20), r(32), lost,
            r(400), r(8), r(-4)
        ]
    }()

    @Test func pictureLossIndication() throws {
        let pli = try PictureLossIndication.parse(Self.pictureLossIndication)
        #expect(pli == PictureLossIndication(senderSSRC: 1, mediaSSRC: 2))
        #expect(pli.serialize() == Self.pictureLossIndication)
        expectEveryStrictPrefixThrows(Self.pictureLossIndication) { bytes throws(WireError) in
            try PictureLossIndication.parse(bytes)
        }
        #expect(
            throws: WireError.invalid(
                what: "rtcp: picture loss indication", reason: "feedback message type 4, expected 1")
        ) {
            try PictureLossIndication.parse(Self.fullIntraRequest)
        }
    }

    @Test func fullIntraRequest() throws {
        let fir = try FullIntraRequest.parse(Self.fullIntraRequest)
        #expect(fir == FullIntraRequest(senderSSRC: 1, entries: [.init(ssrc: 0x1234_5678, sequenceNumber: 5)]))
        #expect(try fir.serialize() == Self.fullIntraRequest)
        expectEveryStrictPrefixThrows(Self.fullIntraRequest) { bytes throws(WireError) in
            try FullIntraRequest.parse(bytes)
        }
        let halfEntry: [UInt8] = [0x84, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78]
        #expect(
            throws: WireError.invalid(what: "rtcp: FIR", reason: "4 FCI bytes is not a whole number of 8-byte entries")
        ) {
            try FullIntraRequest.parse(halfEntry)
        }
    }

    @Test func genericNACK() throws {
        let nack = try GenericNACK.parse(Self.genericNACK)
        #expect(nack.entries == [.init(packetID: 65534, lostBitmask: 0b101), .init(packetID: 32)])
        #expect(nack.lostSequenceNumbers == [65534, 65535, 1, 32])
        #expect(try nack.serialize() == Self.genericNACK)
        let built = GenericNACK(senderSSRC: 1, mediaSSRC: 0x1234_5678, lostSequenceNumbers: [65534, 65535, 1, 32])
        #expect(try built.serialize() == Self.genericNACK)
        expectEveryStrictPrefixThrows(Self.genericNACK) { bytes throws(WireError) in try GenericNACK.parse(bytes) }
    }

    @Test func nackPacksSixteenFollowersPerEntry() {
        let lost: [UInt16] = Array(100...117) + [117, 200]  // 117 repeated
        let nack = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: lost)
        #expect(
            nack.entries == [
                .init(packetID: 100, lostBitmask: 0xFFFF),  // 100 and 101–116
                .init(packetID: 117),
                .init(packetID: 200)
            ])
        #expect(nack.lostSequenceNumbers == Array(100...117) + [200])
        // Across the wrap, numbers in any order still come back as a set.
        let scattered: [UInt16] = [3, 65535, 0, 65520, 1]
        let packed = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: scattered)
        #expect(Set(packed.lostSequenceNumbers) == Set(scattered))
        // 65535 and 0 are 15 and 16 after 65520; 1 is 17 after it and opens a new entry.
        #expect(
            GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: [65520, 65535, 0, 1]).entries
                == [.init(packetID: 65520, lostBitmask: 0xC000), .init(packetID: 1)])
    }

    @Test func receiverEstimatedMaxBitrate() throws {
        let remb = try ReceiverEstimatedMaxBitrate.parse(Self.receiverEstimatedMaxBitrate)
        #expect(remb == ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 1_500_000, ssrcs: [0x1234_5678]))
        #expect(try remb.serialize() == Self.receiverEstimatedMaxBitrate)
        expectEveryStrictPrefixThrows(Self.receiverEstimatedMaxBitrate) { bytes throws(WireError) in
            try ReceiverEstimatedMaxBitrate.parse(bytes)
        }
    }

    @Test func rembKeepsEighteenSignificantBits() throws {
        let remb = ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 1_000_000_007, ssrcs: [])
        let parsed = try ReceiverEstimatedMaxBitrate.parse(remb.serialize())
        #expect(parsed.bitrate == (1_000_000_007 >> 12) << 12)  // 30 bits → exponent 12
        let huge = ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: .max, ssrcs: [])
        #expect(try ReceiverEstimatedMaxBitrate.parse(huge.serialize()).bitrate == 0x3_FFFF << 46)
        // Exponent 63 with a non-zero mantissa cannot be held in 64 bits.
        var overflow = Self.receiverEstimatedMaxBitrate
        overflow[17] = 0xFC
        #expect(throws: WireError.invalid(what: "rtcp: REMB bitrate", reason: "56428 × 2^63 overflows 64 bits")) {
            try ReceiverEstimatedMaxBitrate.parse(overflow)
        }
    }

    @Test func transportWideFeedback() throws {
        let feedback = try TransportWideFeedback.parse(Self.transportWideFeedback)
        #expect(feedback.senderSSRC == 1)
        #expect(feedback.mediaSSRC == 0x1234_5678)
        #expect(feedback.baseSequenceNumber == 65530)
        #expect(feedback.referenceTime == 2748)
        #expect(feedback.feedbackPacketCount == 5)
        #expect(feedback.statuses == Self.transportWideStatuses)
        #expect(try feedback.serialize() == Self.transportWideFeedback)
        expectEveryStrictPrefixThrows(Self.transportWideFeedback) { bytes throws(WireError) in
            try TransportWideFeedback.parse(bytes)
        }
    }

    @Test func transportWideFeedbackResults() throws {
        let results = try TransportWideFeedback.parse(Self.transportWideFeedback).packetResults
        #expect(results.count == 24)
        #expect(results.map(\.sequenceNumber) == (0..<24).map { 65530 &+ UInt16($0) })
        let reference = Duration.milliseconds(175_872)
        #expect(results[0].receiveDelta == .milliseconds(1))
        #expect(results[0].arrivalTime == reference + .milliseconds(1))
        #expect(results[7].arrivalTime == nil && results[7].receiveDelta == nil)
        #expect(results[21].receiveDelta == .milliseconds(100))
        #expect(results[23].receiveDelta == .milliseconds(-1))
        #expect(results[23].arrivalTime == reference + .microseconds(931 * 250))
        #expect(results.filter { $0.arrivalTime != nil }.count == 19)
    }

    @Test func transportWideFeedbackFromArrivals() throws {
        let parsed = try TransportWideFeedback.parse(Self.transportWideFeedback)
        var arrivals: [(sequenceNumber: UInt16, arrivalTime: Duration)] = parsed.packetResults.compactMap { result in
            result.arrivalTime.map { (result.sequenceNumber, $0) }
        }
        arrivals.reverse()  // any order: sorted by sequence number across the wrap
        arrivals.append((65531, .seconds(999)))  // a duplicate keeps the first arrival
        let built = try TransportWideFeedback(
            senderSSRC: 1, mediaSSRC: 0x1234_5678, feedbackPacketCount: 5, arrivals: arrivals)
        #expect(built == parsed)
        #expect(try built.serialize() == Self.transportWideFeedback)
    }

    @Test func transportWideFeedbackBuilderRoundsAndWraps() throws {
        let arrivals: [(sequenceNumber: UInt16, arrivalTime: Duration)] = [
            (10, .milliseconds(64 * 3) + .microseconds(130)),  // 130 µs past the reference → 1 tick (250 µs)
            (12, .milliseconds(64 * 3) + .microseconds(2_000))  // 1870 µs after the quantized 250 µs → 7 ticks
        ]
        let feedback = try TransportWideFeedback(
            senderSSRC: 0, mediaSSRC: 0, feedbackPacketCount: 0, arrivals: arrivals)
        #expect(feedback.referenceTime == 3)
        #expect(feedback.statuses == [.received(delta: 1), .notReceived, .received(delta: 7)])
        // A reference time past 24 bits wraps, sign-extended.
        let late = try TransportWideFeedback(
            senderSSRC: 0, mediaSSRC: 0, feedbackPacketCount: 0,
            arrivals: [(1, .milliseconds(64) * 0x80_0000)])
        #expect(late.referenceTime == -0x80_0000)
        #expect(try TransportWideFeedback.parse(late.serialize()) == late)
        // A gap of 10 s does not fit a delta.
        #expect(throws: WireError.self) {
            try TransportWideFeedback(
                senderSSRC: 0, mediaSSRC: 0, feedbackPacketCount: 0,
                arrivals: [(1, .zero), (2, .seconds(10))])
        }
        #expect(throws: WireError.self) {
            try TransportWideFeedback(senderSSRC: 0, mediaSSRC: 0, feedbackPacketCount: 0, arrivals: [])
        }
    }

    @Test func transportWideFeedbackWithLibwebrtcPadding() throws {
        // libwebrtc pads with the P bit and a count of 1–3 rather than zero bytes.
        var padded = Self.transportWideFeedback
        padded[0] = 0xAF  // V=2 P=1 FMT=15
        padded[padded.count - 1] = 0x01  // padding count 1
        #expect(try TransportWideFeedback.parse(padded) == TransportWideFeedback.parse(Self.transportWideFeedback))
    }

    @Test func transportWideFeedbackChunkChoices() throws {
        // 20 lost in a row is one run length chunk; a lone large delta makes a 2-bit vector.
        let statuses: [TransportWideFeedback.PacketStatus] =
            Array(repeating: .notReceived, count: 20) + [.received(delta: 1000)]
        let feedback = TransportWideFeedback(
            senderSSRC: 0, mediaSSRC: 0, baseSequenceNumber: 0, referenceTime: -1, feedbackPacketCount: 0,
            statuses: statuses)
        let bytes = try feedback.serialize()
        #expect(Array(bytes[16..<20]) == [0xFF, 0xFF, 0xFF, 0x00])  // reference time -1 | fb count
        #expect(
            Array(bytes[20...]) == [
                0x00, 0x14,  // run length chunk: S=00 (not received) run=20
                0xE0, 0x00,  // 2-bit vector: 10 00 00 00 00 00 00
                0x03, 0xE8,  // large delta 1000
                0x00, 0x00
            ])  // zero padding
        #expect(try TransportWideFeedback.parse(bytes) == feedback)
        // An empty feedback has no chunks.
        let empty = TransportWideFeedback(
            senderSSRC: 0, mediaSSRC: 0, baseSequenceNumber: 9, referenceTime: 0, feedbackPacketCount: 0, statuses: [])
        #expect(try TransportWideFeedback.parse(empty.serialize()) == empty)
    }

    @Test func transportWideFeedbackRefusesReservedSymbolsAndMissingDeltas() {
        var reserved = Self.transportWideFeedback
        reserved[20] = 0x60  // run length chunk with S=11
        #expect(
            throws: WireError.invalid(
                what: "rtcp: transport feedback packet chunk", reason: "status symbol 3 is reserved")
        ) {
            try TransportWideFeedback.parse(reserved)
        }
        // Packet status count 24 but the body ends inside the deltas.
        let short: [UInt8] = Array(Self.transportWideFeedback[0..<32])
        var truncated = short
        truncated[3] = 0x07  // length=7 (32 bytes)
        #expect(throws: WireError.truncated(what: "rtcp: transport feedback receive delta", got: 0, need: 1)) {
            try TransportWideFeedback.parse(truncated)
        }
    }
}
