import RTPWire
import Testing
import VideoSend

/// libvpx output through the VP8 payloader and depayloader, then into libavcodec's decoder.
@Suite struct VP8RoundTripTests {
    /// 30 frames of 320×240 (a keyframe forced at 20) and one 1280×720 keyframe.
    static func encodedStream() throws -> [EncodedFrame] {
        let encoder = try VP8Encoder(.init(width: 320, height: 240, bitrate: 600_000, keyframeInterval: 120))
        var frames: [EncodedFrame] = []
        for index in 0..<30 {
            if index == 20 { encoder.forceKeyframe() }
            frames.append(try #require(try encoder.encode(.testPattern(width: 320, height: 240, index: index))))
        }
        let large = try VP8Encoder(.init(width: 1280, height: 720, bitrate: 2_500_000))
        frames.append(try #require(try large.encode(.testPattern(width: 1280, height: 720, index: 0))))
        return frames
    }

    @Test func encoderMarksKeyframesAndTheirSize() throws {
        let frames = try Self.encodedStream()
        let keyframes: [Int] = frames.indices.filter { frames[$0].isKeyframe }
        #expect(keyframes == [0, 20, 30])
        for frame in frames {
            let header = try VP8FrameHeader(frame: frame.bytes)
            #expect(header.isKeyframe == frame.isKeyframe)
        }
        let first = try VP8FrameHeader(frame: frames[0].bytes)
        #expect(first.width == 320 && first.height == 240)
        let last = try VP8FrameHeader(frame: try #require(frames.last).bytes)
        #expect(last.width == 1280 && last.height == 720)
        #expect(try #require(frames.last).bytes.count > 1200)
    }

    @Test func encoderRefusesBadSettingsAndFrames() throws {
        #expect(throws: EncoderError.self) { try VP8Encoder(.init(width: 0, height: 240)) }
        let encoder = try VP8Encoder(.init(width: 320, height: 240))
        #expect(throws: EncoderError.self) { try encoder.encode(.testPattern(width: 640, height: 480, index: 0)) }
    }

    @Test func streamRoundTripsAndDecodes() throws {
        let encoded = try Self.encodedStream()
        var payloader = VP8Payloader(maxPayloadSize: 1200, firstPictureID: 0x7FF0)
        let packets = try packetize(encoded) { try payloader.payload($0.bytes) }
        #expect(packets.allSatisfy { $0.payload.count <= 1200 })
        #expect(Set(packets.map(\.frameIndex)).count == encoded.count)

        var depayloader = VP8Depayloader()
        var events: [DepayloadEvent] = []
        for packet in packets {
            events += try depayloader.push(
                packet.payload, sequenceNumber: packet.sequenceNumber,
                timestamp: packet.timestamp, marker: packet.marker)
        }
        let frames = events.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
        #expect(frames.count == events.count)
        #expect(frames.map(\.bytes) == encoded.map(\.bytes))
        #expect(frames.map(\.isKeyframe) == encoded.map(\.isKeyframe))
        // Picture IDs count frames and wrap at 15 bits.
        let pictureIDs: [UInt16?] = (0..<encoded.count).map { UInt16((0x7FF0 + $0) & 0x7FFF) }
        #expect(frames.map(\.pictureID) == pictureIDs)
        let sizes = try decodedSizes(frames, with: TestVideoDecoder(.vp8))
        let expected: [String] = Array(repeating: "320x240", count: 30) + ["1280x720"]
        #expect(sizes == expected)
    }

    @Test func aLostPacketDropsItsFrameAndTheNextKeyframeDecodes() throws {
        let encoded = try Self.encodedStream()
        var payloader = VP8Payloader(maxPayloadSize: 1200)
        var packets = try packetize(encoded) { try payloader.payload($0.bytes) }
        let firstFramePackets = packets.indices.filter { packets[$0].frameIndex == 0 }
        try #require(firstFramePackets.count >= 3, "the first keyframe needs several packets")
        packets.remove(at: firstFramePackets[1])

        var depayloader = VP8Depayloader()
        var events: [DepayloadEvent] = []
        for packet in packets {
            events += try depayloader.push(
                packet.payload, sequenceNumber: packet.sequenceNumber,
                timestamp: packet.timestamp, marker: packet.marker)
        }
        #expect(
            events.prefix(2) == [
                .gap(after: 65_500, missing: 1),
                .dropped(DroppedFrame(timestamp: 0, firstSequenceNumber: 65_500, reason: .missingPackets))
            ])
        // VP8 marks a frame's first packet, so the frames after the loss arrive whole
        // (they will not decode cleanly without the keyframe: a receiver waits for the next).
        let whole = events.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
        #expect(whole.count == encoded.count - 1)
        let frames = decodable(events)
        let timestamps: [UInt32] = (20...30).map { UInt32($0) * 3000 }
        #expect(frames.map(\.timestamp) == timestamps)
        let sizes = try decodedSizes(frames, with: TestVideoDecoder(.vp8))
        let expected: [String] = Array(repeating: "320x240", count: 10) + ["1280x720"]
        #expect(sizes == expected)
    }
}
