import RTPWire
import ShareCore
import Testing

/// Packets pushed into a depayloader with consecutive sequence numbers from `firstSequence`.
private func depayload(
    _ units: [RTPPayloadUnit], firstSequence: UInt16 = 100, timestamp: UInt32 = 9000,
    into depayloader: inout H264Depayloader
) throws -> [DepayloadEvent] {
    var events: [DepayloadEvent] = []
    for (offset, unit) in units.enumerated() {
        events += try depayloader.push(
            unit.payload, sequenceNumber: firstSequence &+ UInt16(offset),
            timestamp: timestamp, marker: unit.marker)
    }
    return events
}

/// A depayloader that has seen one whole access unit at `sequenceNumber`: the packet after it
/// starts a frame for certain. (The very first packet of a stream proves nothing unless it opens
/// with an SPS or AUD.)
private func primed(at sequenceNumber: UInt16, maximumFrameSize: Int = 8 << 20) throws -> H264Depayloader {
    var depayloader = H264Depayloader(maximumFrameSize: maximumFrameSize)
    _ = try depayloader.push(slice, sequenceNumber: sequenceNumber, timestamp: 0, marker: true)
    return depayloader
}

private func frames(_ events: [DepayloadEvent]) -> [DepayloadedFrame] {
    events.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
}

private func drops(_ events: [DepayloadEvent]) -> [DroppedFrame] {
    events.compactMap { if case let .dropped(drop) = $0 { drop } else { nil } }
}

// Small NAL units used throughout (header byte first).
private let sps: [UInt8] = [0x67, 0x42, 0xE0, 0x1F, 0xDA, 0x02]  // SPS: NRI=3, constrained baseline 3.1
private let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]  // PPS: NRI=3
private let idr: [UInt8] = [0x65, 0x88, 0x84, 0x21, 0xA0]  // IDR slice: NRI=3
private let slice: [UInt8] = [0x41, 0x9A, 0x02, 0x04]  // non-IDR slice: NRI=2
private let aud: [UInt8] = [0x09, 0xF0]  // access unit delimiter

@Suite struct H264AnnexBTests {
    @Test func splitsThreeAndFourByteStartCodes() throws {
        let accessUnit: [UInt8] = [
            0x00, 0x00, 0x00, 0x01, 0x67, 0x42, 0xE0, 0x1F, 0xDA, 0x02,  // 4-byte start code, SPS
            0x00, 0x00, 0x01, 0x68, 0xCE, 0x3C, 0x80,  // 3-byte start code, PPS
            0x00, 0x00, 0x00, 0x01, 0x65, 0x88, 0x84, 0x21, 0xA0,  // IDR slice
            0x00, 0x00
        ]  // trailing_zero_8bits
        let units = try H264AnnexB.nalUnits(in: accessUnit)
        #expect(units.map(Array.init) == [sps, pps, idr])
        #expect(H264AnnexB.accessUnit(units) == [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr)
    }

    @Test func leadingZerosAreAllowedOtherBytesAreNot() throws {
        #expect(
            try H264AnnexB.nalUnits(in: [0x00, 0x00, 0x00, 0x00, 0x01, 0x41, 0x9A]).map(Array.init) == [[0x41, 0x9A]])
        #expect(try H264AnnexB.nalUnits(in: []).isEmpty)
        #expect(throws: WireError.invalid(what: "h264: access unit", reason: "bytes before the first start code")) {
            try H264AnnexB.nalUnits(in: [0x41, 0x00, 0x00, 0x01, 0x41, 0x9A])
        }
        #expect(throws: WireError.invalid(what: "h264: access unit", reason: "no Annex-B start code (00 00 01) found"))
        {
            try H264AnnexB.nalUnits(in: [0x41, 0x9A, 0x02])
        }
    }

    @Test func readsProfileLevelIDFromSPS() throws {
        let id = try H264ProfileLevelID(sps: sps)
        #expect(id == H264ProfileLevelID(profileIDC: 66, constraintFlags: 0xE0, levelIDC: 31))
        #expect(id.hex == "42e01f")
        #expect(id.isConstrainedBaseline)
        #expect(H264ProfileLevelID(hex: "4d001f")?.isConstrainedBaseline == false)
        #expect(H264ProfileLevelID(hex: "4d001") == nil)
        #expect(throws: WireError.truncated(what: "h264: SPS level_idc", got: 0, need: 1)) {
            try H264ProfileLevelID(sps: sps.prefix(3))
        }
        #expect(throws: WireError.self) { try H264ProfileLevelID(sps: pps) }
    }
}

@Suite struct H264PayloaderTests {
    @Test func aggregatesParameterSetsAndASmallSliceIntoOneSTAPA() throws {
        var payloader = H264Payloader(maxPayloadSize: 1200)
        let units = try payloader.payload(H264AnnexB.accessUnit([aud, sps, pps, idr]))
        let stapA: [UInt8] = [
            0x78,  // F=0 NRI=3 (largest), type 24 STAP-A
            0x00, 0x06, 0x67, 0x42, 0xE0, 0x1F, 0xDA, 0x02,  // size 6, SPS
            0x00, 0x04, 0x68, 0xCE, 0x3C, 0x80,  // size 4, PPS
            0x00, 0x05, 0x65, 0x88, 0x84, 0x21, 0xA0
        ]  // size 5, IDR slice (the AUD is left out)
        #expect(units == [RTPPayloadUnit(payload: stapA, marker: true)])
    }

    @Test func sendsANALUnitAloneWhenNothingElseFits() throws {
        var payloader = H264Payloader(maxPayloadSize: 12)
        // SPS (6) + PPS (4) need 1 + 8 + 6 = 15 bytes as a STAP-A: too many for 12.
        let units = try payloader.payload(nalUnits: [sps[...], pps[...]])
        #expect(units == [RTPPayloadUnit(payload: sps, marker: false), RTPPayloadUnit(payload: pps, marker: true)])
    }

    @Test func fragmentsALargeNALUnitIntoFUAStartMiddleEnd() throws {
        var payloader = H264Payloader(maxPayloadSize: 5)
        let big: [UInt8] = [0x65, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09]  // IDR, 9 body bytes
        let units = try payloader.payload(nalUnits: [big[...]])
        #expect(
            units == [
                RTPPayloadUnit(
                    payload: [
                        0x7C,  // FU indicator: F=0 NRI=3, type 28 FU-A
                        0x85,  // FU header: S=1 E=0 R=0, type 5 (IDR)
                        0x01, 0x02, 0x03
                    ], marker: false),
                RTPPayloadUnit(
                    payload: [
                        0x7C, 0x05,  // S=0 E=0: middle
                        0x04, 0x05, 0x06
                    ], marker: false),
                RTPPayloadUnit(
                    payload: [
                        0x7C, 0x45,  // S=0 E=1: end
                        0x07, 0x08, 0x09
                    ], marker: true)
            ])
    }

    @Test func fragmentsAreBalanced() throws {
        var payloader = H264Payloader(maxPayloadSize: 1200)
        let big = [0x41] + [UInt8](repeating: 0xAB, count: 2500)
        let sizes = try payloader.payload(nalUnits: [big[...]]).map(\.payload.count)
        #expect(sizes == [836, 835, 835])  // 2 + 834, 833, 833 body bytes: not 1198 + 1198 + 104
    }

    @Test func insertsRememberedParameterSetsBeforeABareIDR() throws {
        var payloader = H264Payloader(maxPayloadSize: 1200)
        _ = try payloader.payload(nalUnits: [sps[...], pps[...], idr[...]])
        #expect(payloader.sequenceParameterSet == sps)
        _ = try payloader.payload(nalUnits: [slice[...]])
        let bare = try payloader.payload(nalUnits: [idr[...]])
        var depayloader = H264Depayloader()
        let out = frames(try depayload(bare, into: &depayloader))
        #expect(try out.map { try H264AnnexB.nalUnits(in: $0.bytes).map(Array.init) } == [[sps, pps, idr]])
        #expect(out.first?.isKeyframe == true)
    }

    @Test func insertsAMissingPPSAfterThePresentSPS() throws {
        var payloader = H264Payloader(maxPayloadSize: 1200)
        _ = try payloader.payload(nalUnits: [sps[...], pps[...], idr[...]])
        let newSPS: [UInt8] = [0x67, 0x42, 0xE0, 0x28, 0xAA]
        let units = try payloader.payload(nalUnits: [newSPS[...], idr[...]])
        var depayloader = H264Depayloader()
        let out = frames(try depayload(units, into: &depayloader))
        #expect(try out.map { try H264AnnexB.nalUnits(in: $0.bytes).map(Array.init) } == [[newSPS, pps, idr]])
        #expect(payloader.sequenceParameterSet == newSPS)
    }

    @Test func dropsDelimitersAndFillerAndSendsNothingForAnEmptyAccessUnit() throws {
        var payloader = H264Payloader()
        let filler: [UInt8] = [0x0C, 0xFF, 0xFF, 0x80]
        #expect(try payloader.payload(H264AnnexB.accessUnit([aud, filler])).isEmpty)
        #expect(try payloader.payload([]).isEmpty)
    }

    @Test func refusesWhatAnEncoderDoesNotProduce() {
        var payloader = H264Payloader()
        #expect(throws: WireError.invalid(what: "h264: NAL unit header", reason: "forbidden_zero_bit is set")) {
            try payloader.payload(nalUnits: [[0xE5, 0x00][...]])
        }
        #expect(
            throws: WireError.invalid(
                what: "h264: NAL unit header", reason: "FU-A is not a NAL unit an encoder produces")
        ) {
            try payloader.payload(nalUnits: [[0x7C, 0x85, 0x00][...]])
        }
        var tiny = H264Payloader(maxPayloadSize: 2)
        #expect(throws: WireError.self) { try tiny.payload(nalUnits: [idr[...]]) }
    }
}

@Suite struct H264DepayloaderTests {
    @Test func unpacksSTAPAIntoAnnexB() throws {
        var depayloader = H264Depayloader()
        let stapA: [UInt8] = [
            0x78,  // STAP-A, NRI=3
            0x00, 0x06, 0x67, 0x42, 0xE0, 0x1F, 0xDA, 0x02,  // SPS
            0x00, 0x04, 0x68, 0xCE, 0x3C, 0x80,  // PPS
            0x00, 0x05, 0x65, 0x88, 0x84, 0x21, 0xA0
        ]  // IDR slice
        let events = try depayloader.push(stapA, sequenceNumber: 7, timestamp: 3000, marker: true)
        #expect(
            events == [
                .frame(
                    DepayloadedFrame(
                        bytes: [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr,
                        isKeyframe: true, timestamp: 3000, firstSequenceNumber: 7, lastSequenceNumber: 7))
            ])
    }

    @Test func reassemblesFUA() throws {
        var depayloader = try primed(at: 65534)
        #expect(
            try depayloader.push([0x7C, 0x85, 0x01, 0x02], sequenceNumber: 65535, timestamp: 1, marker: false).isEmpty)
        #expect(try depayloader.push([0x7C, 0x05, 0x03], sequenceNumber: 0, timestamp: 1, marker: false).isEmpty)
        let events = try depayloader.push([0x7C, 0x45, 0x04], sequenceNumber: 1, timestamp: 1, marker: true)
        #expect(
            frames(events) == [
                DepayloadedFrame(
                    bytes: [0, 0, 0, 1, 0x65, 0x01, 0x02, 0x03, 0x04], isKeyframe: true,
                    timestamp: 1, firstSequenceNumber: 65535, lastSequenceNumber: 1)
            ])
    }

    @Test func aMissingFragmentDropsTheFrame() throws {
        var depayloader = H264Depayloader()
        var events = try depayloader.push([0x7C, 0x85, 0x01], sequenceNumber: 10, timestamp: 1, marker: false)
        // 11 is lost.
        events += try depayloader.push([0x7C, 0x45, 0x03], sequenceNumber: 12, timestamp: 1, marker: true)
        #expect(
            events == [
                .gap(after: 10, missing: 1),
                .dropped(DroppedFrame(timestamp: 1, firstSequenceNumber: 10, reason: .missingPackets))
            ])
        // The next access unit follows without a gap and comes through.
        events = try depayloader.push(slice, sequenceNumber: 13, timestamp: 2, marker: true)
        #expect(frames(events).count == 1)
    }

    @Test func aLostMarkerDropsThatFrameAndTheUnprovenNextOne() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push([0x7C, 0x85, 0x01], sequenceNumber: 10, timestamp: 1, marker: false)
        // 11 (the end fragment, with the marker) is lost; 12 opens the next access unit with a slice.
        var events = try depayloader.push(slice, sequenceNumber: 12, timestamp: 2, marker: true)
        #expect(
            events == [
                .gap(after: 10, missing: 1),
                .dropped(DroppedFrame(timestamp: 1, firstSequenceNumber: 10, reason: .missingPackets)),
                .dropped(DroppedFrame(timestamp: 2, firstSequenceNumber: 12, reason: .missingPackets))
            ])
        // After another loss, an access unit that opens with its SPS is proven whole.
        events = try depayloader.push(
            [0x78, 0x00, 0x06] + sps + [0x00, 0x04] + pps + [0x00, 0x05] + idr,
            sequenceNumber: 20, timestamp: 3, marker: true)
        #expect(frames(events).map(\.isKeyframe) == [true])
    }

    @Test func aTimestampChangeEndsAnAccessUnitWhoseMarkerWasNotSet() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push(sps, sequenceNumber: 1, timestamp: 1, marker: false)
        let events = try depayloader.push(slice, sequenceNumber: 2, timestamp: 2, marker: true)
        #expect(frames(events).map(\.timestamp) == [1, 2])
    }

    @Test func ignoresLateAndDuplicatePackets() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push(slice, sequenceNumber: 5, timestamp: 1, marker: true)
        #expect(try depayloader.push(slice, sequenceNumber: 5, timestamp: 1, marker: true).isEmpty)
        #expect(try depayloader.push(slice, sequenceNumber: 4, timestamp: 0, marker: true).isEmpty)
        // Reordering is the jitter buffer's job: 7 before 6 is a gap, then 6 is late.
        let events = try depayloader.push(slice, sequenceNumber: 7, timestamp: 3, marker: true)
        #expect(events.first == .gap(after: 5, missing: 1))
        #expect(try depayloader.push(slice, sequenceNumber: 6, timestamp: 2, marker: true).isEmpty)
    }

    @Test func aPacketFarBehindIsASenderRestartNotALatePacket() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push(sps, sequenceNumber: 5000, timestamp: 1, marker: false)
        // 1000 behind: late.
        #expect(try depayloader.push(slice, sequenceNumber: 4000, timestamp: 1, marker: true).isEmpty)
        // 4999 behind: numbering restarted. The open access unit is dropped; the new one opens with
        // its SPS, so it is proven whole.
        let events =
            try depayloader.push(sps, sequenceNumber: 1, timestamp: 90, marker: false)
            + depayloader.push(idr, sequenceNumber: 2, timestamp: 90, marker: true)
        #expect(
            events == [
                .dropped(DroppedFrame(timestamp: 1, firstSequenceNumber: 5000, reason: .missingPackets)),
                .frame(
                    DepayloadedFrame(
                        bytes: [0, 0, 0, 1] + sps + [0, 0, 0, 1] + idr, isKeyframe: true, timestamp: 90,
                        firstSequenceNumber: 1, lastSequenceNumber: 2))
            ])
    }

    @Test func inconsistentFragmentsDropTheFrame() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push(sps, sequenceNumber: 1, timestamp: 1, marker: false)
        let events = try depayloader.push([0x7C, 0x45, 0x03], sequenceNumber: 2, timestamp: 1, marker: true)
        #expect(
            drops(events) == [
                DroppedFrame(
                    timestamp: 1, firstSequenceNumber: 1,
                    reason: .inconsistent("an FU-A continuation arrived without its start"))
            ])
        var open = try primed(at: 0)
        _ = try open.push([0x7C, 0x85, 0x01], sequenceNumber: 1, timestamp: 1, marker: false)
        let ended = try open.push([0x7C, 0x05, 0x01], sequenceNumber: 2, timestamp: 1, marker: true)
        #expect(
            drops(ended).map(\.reason) == [.inconsistent("the access unit ended inside an FU-A fragmented NAL unit")])
        #expect(open.finish().isEmpty)
    }

    @Test func finishReportsAnOpenFrame() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push(sps, sequenceNumber: 1, timestamp: 1, marker: false)
        #expect(drops(depayloader.finish()).map(\.reason) == [.missingPackets])
    }

    @Test func refusesMalformedPackets() {
        let cases: [([UInt8], WireError)] = [
            ([], .truncated(what: "h264: RTP payload", got: 0, need: 1)),
            ([0xE5, 0x00], .invalid(what: "h264: NAL unit header", reason: "forbidden_zero_bit is set")),
            ([0x60, 0x00], .invalid(what: "h264: NAL unit header", reason: "NAL unit type 0 is undefined")),
            ([0x7E, 0x00], .invalid(what: "h264: NAL unit header", reason: "NAL type 30 is reserved")),
            (
                [0x7C, 0xC5, 0x01],  // FU-A with S=1 and E=1
                .invalid(
                    what: "h264: FU-A",
                    reason: "start and end bits both set (a NAL unit that fits one packet is not fragmented)")
            ),
            (
                [0x7C, 0x98, 0x01],  // FU-A carrying type 24
                .invalid(what: "h264: FU-A", reason: "fragmented STAP-A is not a NAL unit")
            ),
            ([0x7C, 0x85], .truncated(what: "h264: FU-A", got: 2, need: 3)),
            (
                [0x78, 0x00, 0x05, 0x65, 0x88],  // STAP-A whose unit claims 5 bytes, 2 present
                .truncated(what: "h264: STAP-A NAL unit", got: 2, need: 5)
            ),
            (
                [0x78, 0x00, 0x02, 0x65, 0x88, 0x00],  // a dangling half size field
                .truncated(what: "h264: STAP-A NAL unit size", got: 1, need: 2)
            ),
            ([0x78, 0x00, 0x00, 0x65], .invalid(what: "h264: STAP-A", reason: "NAL unit 1 has size 0")),
            ([0x78, 0x00, 0x02, 0x78, 0x00], .invalid(what: "h264: STAP-A", reason: "contains a STAP-A packet")),
            (
                [0x78, 0x00, 0x02, 0xE5, 0x00],
                .invalid(what: "h264: STAP-A NAL unit header", reason: "forbidden_zero_bit is set")
            ),
            (
                [0x79, 0x00, 0x00],
                .unsupported(what: "h264: STAP-B packet", reason: "interleaved mode (packetization-mode 2)")
            ),
            (
                [0x7A, 0x00, 0x00],
                .unsupported(what: "h264: MTAP16 packet", reason: "interleaved mode (packetization-mode 2)")
            ),
            (
                [0x7B, 0x00, 0x00],
                .unsupported(what: "h264: MTAP24 packet", reason: "interleaved mode (packetization-mode 2)")
            ),
            (
                [0x7D, 0x85, 0x00, 0x00],
                .unsupported(what: "h264: FU-B packet", reason: "interleaved mode (packetization-mode 2)")
            )
        ]
        for (payload, error) in cases {
            var depayloader = H264Depayloader()
            #expect(throws: error, "\(payload)") {
                try depayloader.push(payload, sequenceNumber: 1, timestamp: 1, marker: true)
            }
        }
    }

    @Test func aRefusedPacketCountsAsLost() throws {
        var depayloader = H264Depayloader()
        _ = try depayloader.push([0x7C, 0x85, 0x01], sequenceNumber: 1, timestamp: 1, marker: false)
        #expect(throws: WireError.self) {
            try depayloader.push([0x7C, 0xC5, 0x02], sequenceNumber: 2, timestamp: 1, marker: false)
        }
        let events = try depayloader.push([0x7C, 0x45, 0x03], sequenceNumber: 3, timestamp: 1, marker: true)
        #expect(drops(events).map(\.reason) == [.missingPackets])
    }

    @Test func everyPrefixOfASTAPAEitherThrowsOrEndsOnAUnitBoundary() throws {
        let stapA: [UInt8] = [0x78, 0x00, 0x06] + sps + [0x00, 0x04] + pps + [0x00, 0x05] + idr
        let boundaries: Set<Int> = [9, 15]  // after the SPS, after the PPS
        for length in 0..<stapA.count {
            var depayloader = H264Depayloader()
            if boundaries.contains(length) {
                #expect(
                    frames(
                        try depayloader.push(
                            Array(stapA.prefix(length)), sequenceNumber: 1, timestamp: 1,
                            marker: true)
                    ).count == 1)
            } else {
                #expect(throws: WireError.self, "prefix of \(length) bytes") {
                    try depayloader.push(Array(stapA.prefix(length)), sequenceNumber: 1, timestamp: 1, marker: true)
                }
            }
        }
    }

    @Test func everyStrictPrefixOfAnFUAHeaderThrows() {
        let fuA: [UInt8] = [0x7C, 0x85, 0x01]  // indicator, FU header, one byte of the NAL unit
        for length in 0..<fuA.count {
            var depayloader = H264Depayloader()
            #expect(throws: WireError.self, "prefix of \(length) bytes") {
                try depayloader.push(Array(fuA.prefix(length)), sequenceNumber: 1, timestamp: 1, marker: false)
            }
        }
    }

    @Test func dropsAccessUnitsBeyondTheSizeLimit() throws {
        var depayloader = try primed(at: 0, maximumFrameSize: 10)
        _ = try depayloader.push(
            [0x41] + [UInt8](repeating: 1, count: 8), sequenceNumber: 1, timestamp: 1, marker: false)
        let events = try depayloader.push([0x41, 2, 2, 2], sequenceNumber: 2, timestamp: 1, marker: true)
        #expect(drops(events).map(\.reason) == [.inconsistent("frame larger than 10 bytes")])
    }
}

@Suite struct H264StreamStartTests {
    @Test func aStreamsFirstAccessUnitMustProveItsStart() throws {
        // Joining mid-stream: the first packet is a slice fragment, whose access unit may have begun earlier.
        var joining = H264Depayloader()
        _ = try joining.push([0x7C, 0x81, 0x01], sequenceNumber: 1, timestamp: 1, marker: false)
        let events = try joining.push([0x7C, 0x41, 0x02], sequenceNumber: 2, timestamp: 1, marker: true)
        #expect(drops(events).map(\.reason) == [.missingPackets])
        // A stream that opens with its parameter sets is whole from the first packet.
        var fresh = H264Depayloader()
        let first =
            try fresh.push(sps, sequenceNumber: 1, timestamp: 1, marker: false)
            + fresh.push(pps, sequenceNumber: 2, timestamp: 1, marker: false)
            + fresh.push(idr, sequenceNumber: 3, timestamp: 1, marker: true)
        #expect(frames(first).map(\.isKeyframe) == [true])
    }
}

@Suite struct H264TrailingZeroTests {
    /// Chromium (OpenH264, screen content) sends its SPS in a STAP-A with a trailing zero byte.
    @Test func stapAWithAnSPSEndingInZeroIsTaken() throws {
        var depayloader = H264Depayloader()
        let stapA: [UInt8] = [
            0x78,  // STAP-A, NRI 3
            0x00, 0x06, 0x67, 0x42, 0xC0, 0x1F, 0x8C, 0x00,  // SPS (5 bytes) + trailing_zero_8bits
            0x00, 0x04, 0x68, 0xCE, 0x3C, 0x80,  // PPS
            0x00, 0x03, 0x65, 0x88, 0x84  // IDR slice
        ]
        let taken = frames(try depayloader.push(stapA, sequenceNumber: 7, timestamp: 90, marker: true))
        #expect(taken.count == 1 && taken.first?.isKeyframe == true)
        #expect(
            taken.first?.bytes == [
                0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x1F, 0x8C,
                0, 0, 0, 1, 0x68, 0xCE, 0x3C, 0x80,
                0, 0, 0, 1, 0x65, 0x88, 0x84
            ])
    }
}

@Suite struct H264FuzzRegressionTests {
    /// Found by FuzzDepayloaders: a single NAL unit packet hiding a start code (00 00 01) came out
    /// as two NAL units, the second with its forbidden bit set.
    @Test func aNALUnitHidingAStartCodeIsRefused() throws {
        var depayloader = H264Depayloader()
        #expect(
            throws: WireError.invalid(
                what: "h264: NAL unit", reason: "contains 00 00 01 (missing emulation prevention)")
        ) {
            try depayloader.push(
                [0x09, 0x00, 0x16, 0x78, 0x00, 0x00, 0x01, 0xE9, 0xE9, 0x06, 0x16, 0x78, 0x67],
                sequenceNumber: 1, timestamp: 1, marker: true)
        }
        // A unit ending in zero bytes (trailing_zero_8bits) is taken without them (H264TrailingZeroTests).
        var fresh = H264Depayloader()
        #expect(throws: Never.self) {
            _ = try fresh.push([0x78, 0x00, 0x03, 0x41, 0x00, 0x00], sequenceNumber: 1, timestamp: 1, marker: true)
        }
        // Emulation prevention itself (00 00 03) is fine.
        #expect(
            try depayloader.push([0x67, 0x42, 0x00, 0x00, 0x03, 0x01], sequenceNumber: 1, timestamp: 1, marker: true)
                .count == 1)
        // Across FU-A fragments the check applies to the reassembled unit.
        var fragmented = try primed(at: 0)
        _ = try fragmented.push([0x7C, 0x81, 0x01, 0x00], sequenceNumber: 1, timestamp: 2, marker: false)
        let events = try fragmented.push([0x7C, 0x41, 0x00, 0x02], sequenceNumber: 2, timestamp: 2, marker: true)
        #expect(
            drops(events).map(\.reason) == [
                .inconsistent("the FU-A reassembled NAL unit contains 00 00 02 (missing emulation prevention)")
            ])
        var payloader = H264Payloader()
        #expect(
            throws: WireError.invalid(
                what: "h264: slice NAL unit", reason: "contains 00 00 00 (missing emulation prevention)")
        ) {
            try payloader.payload(nalUnits: [[0x41, 0x00, 0x00, 0x00, 0x05][...]])
        }
    }
}
