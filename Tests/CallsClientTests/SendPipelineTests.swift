import CallsClient
import Foundation
import RTPWire
import ScreenCapture
import ShareCore
import TestSupport
import Testing
import VideoSend
@testable import CallMedia

/// The whole send path without a network: the synthetic screen on its thread, the frame queue,
/// the encoder thread, the payloader and the RTP stream sender; then the receive side parses the
/// packets, depayloads, decodes with libavcodec and reads the timecode back from the pictures.
@Suite struct SendPipelineTests {
    @Test(arguments: [VideoCodec.h264, .vp8])
    func synthesizedScreenArrivesDecodableWithItsTimecodes(codec: VideoCodec) async throws {
        let packets = Locked<[[UInt8]]>([])
        let sender = RTPStreamSender(
            configuration: .init(
                ssrc: 0xABCD, payloadType: 96, clockRate: 90_000,
                extensions: SendExtensions(mid: (1, "0"), absSendTimeID: 2, transportSequenceID: 3)),
            transportSequence: TransportSequenceCounter()
        ) { bytes in
            packets.withLock { $0.append(bytes) }; return true
        }
        let payloader = Locked(VideoPayloader(codec: codec))
        let queue = FrameQueue()
        let encoder = VideoEncodingThread(
            queue: queue,
            settings: .init(
                factory: VideoEncoderFactory(codec: codec), bitrate: 1_500_000, maxLongSide: 640,
                policy: .detail),  // detail never changes size, even on a busy machine
            logger: .disabled
        ) { frame, captureMicros in
            let units = (try? payloader.withLock { try $0.payload(frame) }) ?? []
            sender.send(units, timestamp: UInt32(truncatingIfNeeded: captureMicros * 9 / 100), nowMicros: captureMicros)
        }
        let source = SyntheticScreenSource(width: 1280, height: 720, framesPerSecond: 30)
        encoder.start()
        source.start { queue.push($0) }
        // Until 15 frames are through (a loaded machine takes longer; the limit only guards a hang,
        // and the expectations below judge).
        try? await until("15 frames encoded", within: .seconds(120)) { encoder.counters.framesEncoded >= 15 }
        source.stop()
        encoder.stop()

        let counters = encoder.counters
        #expect(counters.framesEncoded >= 15, "\(counters)")
        #expect(counters.width == 640 && counters.height == 360, "scaled to the 640 long side")
        #expect(counters.keyframes >= 1)

        var depayloader = VideoDepayloader(codec: codec)
        let decoder = try VideoDecoder(codec: codec)
        var timecodes: [UInt32] = []
        var transportSequences: [UInt16] = []
        for bytes in packets.withLock({ $0 }) {
            let packet = try RTPPacket.parse(bytes)
            let map = HeaderExtensionMap([
                1: HeaderExtensionURI.mid, 2: HeaderExtensionURI.absSendTime,
                3: HeaderExtensionURI.transportWideSequenceNumber
            ])
            #expect(try packet.headerExtensionValue(MediaIdentification.self, map: map)?.value == "0")
            if let sequence = try packet.headerExtensionValue(TransportSequenceNumber.self, map: map) {
                transportSequences.append(sequence.value)
            }
            for frame in try depayloader.push(packet) {
                if let picture = try decoder.decode(frame.bytes),
                    let code = Timecode.read(
                        fromLuma: picture.planes[0].bytes, width: picture.width,
                        height: picture.height, stride: picture.planes[0].stride)
                {
                    timecodes.append(code.frameNumber)
                }
            }
        }
        #expect(
            transportSequences == (0..<UInt16(transportSequences.count)).map { $0 },
            "one transport-wide number per packet")
        #expect(timecodes.count == counters.framesEncoded, "every encoded frame decodes with a readable timecode")
        #expect(timecodes == timecodes.sorted(), "in capture order")
        #expect(sender.counters.packetsSent == packets.withLock { $0.count })
        #expect(sender.counters.framesSent == counters.framesEncoded, "every encoded frame left whole")
    }
}
