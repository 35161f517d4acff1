import RTPWire
import Testing
import VideoSend

/// An RTP packet as far as the depayloaders care, with the index of the frame it came from.
struct TestPacket {
    var payload: [UInt8]
    var marker: Bool
    var sequenceNumber: UInt16
    var timestamp: UInt32
    var frameIndex: Int
}

/// Numbers payloads the way a sender would: consecutive sequence numbers (starting near the wrap),
/// one 90 kHz timestamp per frame at 30 fps.
func packetize(
    _ frames: [EncodedFrame], firstSequenceNumber: UInt16 = 65_500,
    payload: (EncodedFrame) throws -> [RTPPayloadUnit]
) throws -> [TestPacket] {
    var packets: [TestPacket] = []
    var sequenceNumber = firstSequenceNumber
    for (index, frame) in frames.enumerated() {
        for unit in try payload(frame) {
            packets.append(
                TestPacket(
                    payload: unit.payload, marker: unit.marker, sequenceNumber: sequenceNumber,
                    timestamp: UInt32(index) * 3000, frameIndex: index))
            sequenceNumber &+= 1
        }
    }
    return packets
}

/// What a receiver would decode: after a dropped frame it waits for the next keyframe.
func decodable(_ events: [DepayloadEvent]) -> [DepayloadedFrame] {
    var waitingForKeyframe = false
    var frames: [DepayloadedFrame] = []
    for event in events {
        switch event {
        case .dropped, .gap:
            waitingForKeyframe = true
        case let .frame(frame):
            if waitingForKeyframe && !frame.isKeyframe { continue }
            waitingForKeyframe = false
            frames.append(frame)
        }
    }
    return frames
}

func decodedSizes(_ frames: [DepayloadedFrame], with decoder: TestVideoDecoder) throws -> [String] {
    var sizes: [(width: Int, height: Int)] = []
    for frame in frames { sizes += try decoder.decode(frame.bytes) }
    sizes += decoder.flush()
    return sizes.map { "\($0.width)x\($0.height)" }
}
