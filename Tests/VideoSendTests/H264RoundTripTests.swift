import RTPWire
import Testing
import VideoSend

/// x264 output through the H.264 payloader and depayloader, then into libavcodec's decoder.
@Suite struct H264RoundTripTests {
    /// 30 frames of 320×240 (a keyframe forced at 20) and one 1280×720 keyframe, large enough for FU-A.
    static func encodedStream() throws -> [EncodedFrame] {
        let encoder = try X264Encoder(.init(width: 320, height: 240, bitrate: 600_000, keyframeInterval: 120))
        var frames: [EncodedFrame] = []
        for index in 0..<30 {
            if index == 20 { encoder.forceKeyframe() }
            frames.append(try #require(try encoder.encode(.testPattern(width: 320, height: 240, index: index))))
        }
        let large = try X264Encoder(.init(width: 1280, height: 720, bitrate: 2_500_000))
        frames.append(try #require(try large.encode(.testPattern(width: 1280, height: 720, index: 0))))
        return frames
    }

    static func types(_ accessUnit: [UInt8]) throws -> [H264NALUnitType] {
        try H264AnnexB.nalUnits(in: accessUnit).map { H264NALUnitType(header: $0.first ?? 0) }
    }

    @Test func encoderMakesConstrainedBaselineWithHeadersOnEveryKeyframe() throws {
        let frames = try Self.encodedStream()
        let keyframes: [Int] = frames.indices.filter { frames[$0].isKeyframe }
        #expect(keyframes == [0, 20, 30])
        for frame in frames where frame.isKeyframe {
            let units = try H264AnnexB.nalUnits(in: frame.bytes)
            let sps = try #require(units.first { H264NALUnitType(header: $0.first ?? 0) == .sequenceParameterSet })
            #expect(try H264ProfileLevelID(sps: sps).isConstrainedBaseline)
            #expect(try Self.types(frame.bytes).contains(.pictureParameterSet))
            #expect(try Self.types(frame.bytes).contains(.idrSlice))
        }
        #expect(frames.map(\.frameIndex).prefix(3) == [0, 3000, 6000])  // 90 kHz at 30 fps
    }

    @Test func mainProfileIsMainNeverHigh() throws {
        let encoder = try X264Encoder(.init(width: 320, height: 240, profile: .main))
        let frame = try #require(try encoder.encode(.testPattern(width: 320, height: 240, index: 0)))
        let sps = try #require(
            try H264AnnexB.nalUnits(in: frame.bytes).first {
                H264NALUnitType(header: $0.first ?? 0) == .sequenceParameterSet
            })
        #expect(try H264ProfileLevelID(sps: sps).profileIDC == 77)
    }

    @Test func encoderRefusesBadSettingsAndFrames() throws {
        #expect(throws: EncoderError.self) { try X264Encoder(.init(width: 321, height: 240)) }
        let encoder = try X264Encoder(.init(width: 320, height: 240))
        #expect(throws: EncoderError.self) { try encoder.encode(.testPattern(width: 640, height: 480, index: 0)) }
        #expect(encoder.flush().isEmpty)  // zerolatency holds nothing back
    }

    @Test func streamRoundTripsAndDecodes() throws {
        let encoded = try Self.encodedStream()
        var payloader = H264Payloader(maxPayloadSize: 1200)
        let packets = try packetize(encoded) { try payloader.payload($0.bytes) }
        #expect(packets.allSatisfy { $0.payload.count <= 1200 })
        #expect(packets.contains { H264NALUnitType(header: $0.payload[0]) == .fuA })
        #expect(packets.contains { H264NALUnitType(header: $0.payload[0]) == .stapA })
        #expect(packets.filter(\.marker).count == encoded.count)

        var depayloader = H264Depayloader()
        var events: [DepayloadEvent] = []
        for packet in packets {
            events += try depayloader.push(
                packet.payload, sequenceNumber: packet.sequenceNumber,
                timestamp: packet.timestamp, marker: packet.marker)
        }
        let frames = events.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
        #expect(
            frames.count == events.count,
            "only whole frames: \(events.filter { if case .frame = $0 { false } else { true } })")
        try #require(frames.count == encoded.count)
        for (sent, received) in zip(encoded, frames) {
            // The same NAL units (x264 writes no delimiters or filler here), 4-byte start codes.
            #expect(try H264AnnexB.nalUnits(in: sent.bytes) == H264AnnexB.nalUnits(in: received.bytes))
            #expect(received.isKeyframe == sent.isKeyframe)
            if received.isKeyframe {
                let types = try Self.types(received.bytes)
                let firstIDR = try #require(types.firstIndex(of: .idrSlice))
                #expect(
                    types[..<firstIDR].contains(.sequenceParameterSet)
                        && types[..<firstIDR].contains(.pictureParameterSet))
            }
        }
        let sizes = try decodedSizes(frames, with: TestVideoDecoder(.h264))
        let expected: [String] = Array(repeating: "320x240", count: 30) + ["1280x720"]
        #expect(sizes == expected)
    }

    @Test func parameterSetsArePutBackBeforeABareKeyframe() throws {
        let encoded = try Self.encodedStream()
        var payloader = H264Payloader(maxPayloadSize: 1200)
        _ = try payloader.payload(encoded[0].bytes)
        // The forced keyframe with its SPS and PPS taken out, as some encoders send them.
        let bare = H264AnnexB.accessUnit(
            try H264AnnexB.nalUnits(in: encoded[20].bytes).filter {
                let type = H264NALUnitType(header: $0.first ?? 0)
                return type != .sequenceParameterSet && type != .pictureParameterSet
            })
        let packets = try packetize([EncodedFrame(bytes: bare, isKeyframe: true, frameIndex: 20)]) {
            try payloader.payload($0.bytes)
        }
        var depayloader = H264Depayloader()
        var events: [DepayloadEvent] = []
        for packet in packets {
            events += try depayloader.push(
                packet.payload, sequenceNumber: packet.sequenceNumber,
                timestamp: packet.timestamp, marker: packet.marker)
        }
        let frames = decodable(events)
        try #require(frames.count == 1)
        #expect(try Self.types(frames[0].bytes).prefix(2) == [.sequenceParameterSet, .pictureParameterSet])
        // A decoder that joins at this keyframe decodes it.
        #expect(try decodedSizes(frames, with: TestVideoDecoder(.h264)) == ["320x240"])
    }

    @Test func aLostFragmentDropsItsFrameAndTheNextKeyframeDecodes() throws {
        let encoded = try Self.encodedStream()
        var payloader = H264Payloader(maxPayloadSize: 1200)
        var packets = try packetize(encoded) { try payloader.payload($0.bytes) }
        // Lose a middle FU-A fragment of the first keyframe.
        let fragments = packets.indices.filter {
            packets[$0].frameIndex == 0 && H264NALUnitType(header: packets[$0].payload[0]) == .fuA
                && packets[$0].payload[1] & 0xC0 == 0
        }
        let lost = try #require(fragments.first)
        let lostSequence = packets[lost].sequenceNumber
        packets.remove(at: lost)

        var depayloader = H264Depayloader()
        var events: [DepayloadEvent] = []
        for packet in packets {
            events += try depayloader.push(
                packet.payload, sequenceNumber: packet.sequenceNumber,
                timestamp: packet.timestamp, marker: packet.marker)
        }
        #expect(
            events.prefix(2) == [
                .gap(after: lostSequence &- 1, missing: 1),
                .dropped(DroppedFrame(timestamp: 0, firstSequenceNumber: 65_500, reason: .missingPackets))
            ])
        let frames = decodable(events)
        let timestamps: [UInt32] = (20...30).map { UInt32($0) * 3000 }
        #expect(frames.map(\.timestamp) == timestamps)
        let sizes = try decodedSizes(frames, with: TestVideoDecoder(.h264))
        let expected: [String] = Array(repeating: "320x240", count: 10) + ["1280x720"]
        #expect(sizes == expected)
    }
}
