import RTPWire
import ShareCore
import VideoSend

/// The codec's depayloader behind one face: RTP packets in order, whole frames out. Gaps and
/// dropped frames are counted (the receiver asks for a keyframe when one was dropped).
public struct VideoDepayloader: Sendable {
    private enum Inner: Sendable {
        case h264(H264Depayloader)
        case vp8(VP8Depayloader)
    }

    public struct Counters: Sendable, Equatable {
        public var frames = 0
        public var keyframes = 0
        public var dropped = 0
        public var gaps = 0
        public var malformed = 0
    }

    private var inner: Inner
    public let codec: VideoCodec
    public private(set) var counters = Counters()

    public init(codec: VideoCodec) {
        self.codec = codec
        switch codec {
        case .h264: inner = .h264(H264Depayloader())
        case .vp8: inner = .vp8(VP8Depayloader())
        }
    }

    /// The frames this packet completes. A malformed payload is counted and treated as lost.
    public mutating func push(_ packet: RTPPacket) throws(WireError) -> [DepayloadedFrame] {
        try settle(packet).compactMap { event in
            if case .frame(let frame) = event { return frame }
            return nil
        }
    }

    /// What this packet settled, in order: gaps, frames lost and frames completed. A malformed
    /// payload is counted and treated as lost.
    public mutating func settle(_ packet: RTPPacket) throws(WireError) -> [DepayloadEvent] {
        let events: [DepayloadEvent]
        do {
            switch inner {
            case .h264(var depayloader):
                defer { inner = .h264(depayloader) }
                events = try depayloader.push(
                    packet.payload, sequenceNumber: packet.sequenceNumber,
                    timestamp: packet.timestamp, marker: packet.marker)
            case .vp8(var depayloader):
                defer { inner = .vp8(depayloader) }
                events = try depayloader.push(
                    packet.payload, sequenceNumber: packet.sequenceNumber,
                    timestamp: packet.timestamp, marker: packet.marker)
            }
        } catch {
            counters.malformed += 1
            throw error
        }
        for event in events {
            switch event {
            case .frame(let frame):
                counters.frames += 1
                if frame.isKeyframe { counters.keyframes += 1 }
            case .dropped: counters.dropped += 1
            case .gap: counters.gaps += 1
            }
        }
        return events
    }
}
