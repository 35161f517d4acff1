import Foundation
import RTPWire
import ShareCore
import TestSupport
import VideoSend
import Testing
@testable import CallMedia

/// Frames given in order, each as fresh as it is read (the send thread's deadline never drops one).
private final class FrameScript: AudioFrameSource {
    let channels: Int
    let description = "frame script"
    private let frames: Locked<[[Int16]]>

    init(channels: Int, frames: [[Int16]]) {
        self.channels = channels
        self.frames = Locked(frames)
    }

    func start() {}
    func stop() {}
    func nextFrame() -> CaptureFrameSlicer.Frame? {
        guard let samples = frames.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Thread.sleep(forTimeInterval: 0.01)
            return nil
        }
        return .init(samples: samples, end: .now)
    }
}

/// The seed's Opus rules (003) through the real send thread and libopus: digital silence reopens
/// the encoder once, so real three-byte silence packets go; the first after the reopen is marked
/// (RTP marker) and the decoder resets there; nothing bursts at the transitions; and no packet,
/// whatever the signal, outgrows the smallest datagram the project supports.
@Suite struct OpusSilenceTests {
    /// Sends `frames` through an `AudioSendThread` at `bitrate`; the packets it sent, in order.
    func send(_ frames: [[Int16]], channels: Int, bitrate: Int = AudioSendThread.defaultBitrate) async throws
        -> [RTPPacket]
    {
        let (sender, sent) = capturingAudioSender(ssrc: 11)
        let thread = AudioSendThread(
            sender: sender, source: FrameScript(channels: channels, frames: frames),
            logger: Logger(label: "test", level: .error), mute: AudioMute(), bitrate: bitrate)
        try thread.start()
        // A hang guard only: the expectations judge.
        try? await until("every frame sent", within: .seconds(120)) { thread.snapshot.framesEncoded >= frames.count }
        thread.stop()
        return sent.withLock { $0 }
    }

    /// 20 ms of a 1 kHz sine at `dbfs`, mono, starting at sample `offset` of the signal.
    static func sine(frame index: Int, dbfs: Double) -> [Int16] {
        let amplitude = 32767 * pow(10, dbfs / 20)
        return (0..<960).map { n in
            Int16((amplitude * sin(2 * Double.pi * 1000 * Double(index * 960 + n) / 48_000)).rounded())
        }
    }

    @Test func fourSecondsOfToneWithTwoSilencesDecodeCleanly() async throws {
        // 4.2 s (210 frames) of a −12 dBFS 1 kHz tone with two 100 ms gaps of exact zeros.
        let gaps = [60..<65, 140..<145]
        let frames = (0..<210).map { index in
            gaps.contains { $0.contains(index) }
                ? [Int16](repeating: 0, count: 960) : Self.sine(frame: index, dbfs: -12)
        }
        let packets = try await send(frames, channels: 1)
        try #require(packets.count == 210)

        // Sequence and time: one packet every 960 samples, numbered without a hole.
        for (a, b) in zip(packets, packets.dropFirst()) {
            #expect(b.sequenceNumber == a.sequenceNumber &+ 1)
            #expect(b.timestamp &- a.timestamp == 960)
        }
        // The first packet of each silence is marked (the reopen); no other after the first.
        let marked = packets.indices.filter { packets[$0].marker }
        #expect(marked == [0, 60, 140], "marked: \(marked)")

        let decoder = try OpusAudioDecoder(channels: 1)
        var levels: [Double] = []
        var peak = 0.0
        for (index, packet) in packets.enumerated() {
            if packet.marker { decoder.reset() }
            let pcm = try decoder.decode(packet.payload)
            #expect(pcm.count == 960, "frame \(index): \(pcm.count) samples")
            levels.append(AudioLevel.peakDbfs(pcm))
            peak = max(peak, Double(pcm.map { abs(Int($0)) }.max() ?? 0) / 32768)
            if gaps.contains(where: { $0.contains(index) }) && index != 60 && index != 140 {
                #expect(packet.payload.count < 10, "silence frame \(index): \(packet.payload.count) bytes")
            }
        }
        // The tone at its level before and after each gap (the encoder's first frames left aside).
        for gap in gaps {
            for index in [gap.lowerBound - 3, gap.lowerBound - 1, gap.upperBound + 2, gap.upperBound + 5] {
                #expect(abs(levels[index] - -12) < 1.5, "frame \(index) decodes at \(levels[index]) dBFS")
            }
            for index in gap.dropFirst() {
                #expect(levels[index] < -60, "silence frame \(index) decodes at \(levels[index]) dBFS")
            }
        }
        // −12 dBFS is 0.251 of full scale; nothing bursts at a transition.
        #expect(peak < 0.35, "peak \(peak)")
    }

    @Test(arguments: ["full-scale noise", "alternating samples", "DC", "silence"])
    func everyPacketFitsTheSmallestDatagram(signal: String) async throws {
        var generator = SystemRandomNumberGenerator()
        let frames: [[Int16]] = (0..<50).map { _ in
            (0..<(960 * 2)).map { n in
                switch signal {
                case "full-scale noise": Int16.random(in: Int16.min...Int16.max, using: &generator)
                case "alternating samples": (n / 2) % 2 == 0 ? Int16.max : Int16.min
                case "DC": Int16.max
                default: 0
                }
            }
        }
        let packets = try await send(frames, channels: 2, bitrate: AudioSendThread.highestBitrate)
        #expect(packets.count == 50)
        // 576 bytes (the smallest datagram IPv4 hosts must take) less IPv4 (20), UDP (8), RTP (12)
        // and the SRTP tag (10).
        let largest = packets.map(\.payload.count).max() ?? 0
        #expect(largest <= 576 - 20 - 8 - 12 - 10, "\(signal): the largest packet is \(largest) bytes")
        #expect(largest <= OpusAudioEncoder.maxPacketBytes)
    }
}
