import Foundation
import RTPWire
import Testing
@testable import VideoSend

/// The libavcodec encoder path that drives VA-API and NVENC, exercised through libavcodec's libx264
/// wrapper (this machine has no GPU): the same context, frame, packet and rate code.
@Suite struct LibavEncoderTests {
    @Test func softwareBackendMakesDecodableConstrainedBaseline() throws {
        let encoder = try LibavH264Encoder(.init(backend: .software, width: 320, height: 240, bitrate: 600_000))
        var frames: [EncodedFrame] = []
        for index in 0..<20 {
            if index == 12 { encoder.forceKeyframe() }
            if let out = try encoder.encode(
                .testPattern(width: 320, height: 240, index: index), timestamp90kHz: Int64(index) * 3000)
            {
                frames.append(out)
            }
        }
        #expect(frames.count == 20, "low delay: one frame out per frame in")
        let keyframes = frames.indices.filter { frames[$0].isKeyframe }
        #expect(keyframes == [0, 12])
        for frame in frames where frame.isKeyframe {
            let units = try H264AnnexB.nalUnits(in: frame.bytes)
            let sps = try #require(units.first { H264NALUnitType(header: $0.first ?? 0) == .sequenceParameterSet })
            #expect(try H264ProfileLevelID(sps: sps).isConstrainedBaseline)
        }
        let decoder = try TestVideoDecoder(.h264)
        var decoded = 0
        for frame in frames {
            decoded += try decoder.decode(frame.bytes).filter { $0.width == 320 && $0.height == 240 }.count
        }
        #expect(decoded == frames.count)
    }

    @Test func bitrateChangesReachTheRunningEncoder() throws {
        let encoder = try LibavH264Encoder(
            .init(backend: .software, width: 640, height: 360, bitrate: 1_500_000, keyframeInterval: 3000))
        func run(_ range: Range<Int>) throws -> (bytes: Int, keyframes: Int) {
            var total = 0, keys = 0
            for index in range {
                let out = try encoder.encode(
                    try EncoderRateTests.noise(index: index), timestamp90kHz: Int64(index) * 3000)
                total += out?.bytes.count ?? 0
                if out?.isKeyframe == true { keys += 1 }
            }
            return (total, keys)
        }
        _ = try run(0..<30)
        let high = try run(30..<90)
        try encoder.setRate(bitrate: 200_000, frameRate: 30)
        _ = try run(90..<120)
        let low = try run(120..<180)
        #expect(low.keyframes == 0)
        #expect(low.bytes * 3 < high.bytes, "high \(high.bytes) B, low \(low.bytes) B")
    }

    @Test func theProbeSaysWhyAHardwareEncoderIsMissing() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-devices-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let findings = HardwareEncoders.probe(devices: empty.path)
        #expect(findings.map(\.backend) == [.vaapi, .nvenc])
        #expect(findings.allSatisfy { !$0.usable })
        let vaapi = try #require(findings.first)
        // Debian's libavcodec has both encoders; what is missing here is the device.
        #expect(
            vaapi.reason.contains("no render node") || vaapi.reason.contains("has no h264_vaapi"), "\(vaapi.reason)")
    }

    @Test func aMissingDeviceIsAClearError() {
        #expect(throws: EncoderError.self) {
            _ = try LibavH264Encoder(.init(backend: .vaapi, width: 320, height: 240, device: "/nonexistent/renderD128"))
        }
    }
}
