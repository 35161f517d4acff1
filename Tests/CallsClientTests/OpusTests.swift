import CallsClient
import Testing
@testable import CallMedia
@testable import RoomProtocol
@testable import ShareCore
@testable import Signalling

@Suite struct OpusTests {
    @Test func toneSurvivesEncodeAndDecodeAtItsLevel() throws {
        let encoder = try OpusAudioEncoder(channels: 2, bitrate: 64_000)
        let decoder = try OpusAudioDecoder(channels: 2)
        var tone = SyntheticTone(frequency: 440, levelDbfs: -20)
        var decodedLevel = AudioLevel.silence
        var sizes: [Int] = []
        for _ in 0..<50 {
            let frame = tone.nextFrame()
            #expect(abs(AudioLevel.peakDbfs(frame) - -20) < 0.1)
            let packet = try encoder.encode(frame)
            sizes.append(packet.count)
            let pcm = try decoder.decode(packet)
            #expect(pcm.count == 960 * 2)
            decodedLevel = AudioLevel.peakDbfs(pcm)
        }
        #expect(abs(decodedLevel - -20) < 3, "decoded tone peak \(decodedLevel) dBFS")
        // 64 kbit/s at 50 packets a second is 160 bytes a packet on average; constrained VBR stays near it.
        let average = sizes.reduce(0, +) / sizes.count
        #expect((100...220).contains(average), "average packet \(average) bytes")
    }

    @Test func digitalSilenceCompressesToSmallPackets() throws {
        let encoder = try OpusAudioEncoder()
        let silence = [Int16](repeating: 0, count: 960 * 2)
        var last = 0
        for _ in 0..<10 { last = try encoder.encode(silence).count }
        #expect(last < 20, "a silent frame took \(last) bytes")
        #expect(AudioLevel.peakDbfs(silence) == AudioLevel.silence)
        #expect(!encoder.usesDTX)
    }

    @Test func wrongFrameSizeAndGarbagePacketsAreErrors() throws {
        let encoder = try OpusAudioEncoder()
        #expect(throws: OpusAudioEncoder.Failure.self) { try encoder.encode([0, 1, 2]) }
        let decoder = try OpusAudioDecoder()
        let concealed = try decoder.decode(nil)
        #expect(concealed.count == 960 * 2)
        // A code-3 TOC claiming more frames than the packet holds is invalid.
        #expect(throws: OpusAudioEncoder.Failure.self) { try decoder.decode([0xFF, 0xFF]) }
    }
}
