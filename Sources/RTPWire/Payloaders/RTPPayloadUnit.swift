import ShareCore

/// One RTP payload a payloader produced: the bytes after the RTP header, and whether the packet
/// carrying it ends the frame (the RTP marker bit). The sender adds the header, sequence number
/// and the frame's timestamp.
public struct RTPPayloadUnit: Hashable, Sendable {
    public var payload: [UInt8]
    public var marker: Bool

    public init(payload: [UInt8], marker: Bool) {
        self.payload = payload
        self.marker = marker
    }
}

/// A whole frame a depayloader put back together.
public struct DepayloadedFrame: Hashable, Sendable {
    /// The frame as a decoder takes it: an Annex-B access unit with 4-byte start codes for H.264,
    /// the VP8 frame for VP8, the Opus packet for Opus.
    public var bytes: [UInt8]
    /// The frame decodes on its own (an H.264 IDR, a VP8 key frame; every Opus packet).
    public var isKeyframe: Bool
    /// The RTP timestamp all of the frame's packets carried.
    public var timestamp: UInt32
    public var firstSequenceNumber: UInt16
    public var lastSequenceNumber: UInt16
    /// The VP8 picture ID, when the sender put one in the payload descriptor.
    public var pictureID: UInt16?

    public init(
        bytes: [UInt8], isKeyframe: Bool, timestamp: UInt32, firstSequenceNumber: UInt16,
        lastSequenceNumber: UInt16, pictureID: UInt16? = nil
    ) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.timestamp = timestamp
        self.firstSequenceNumber = firstSequenceNumber
        self.lastSequenceNumber = lastSequenceNumber
        self.pictureID = pictureID
    }
}

/// A frame a depayloader saw part of but could not hand on whole.
public struct DroppedFrame: Hashable, Sendable, CustomStringConvertible {
    public var timestamp: UInt32
    /// The first of the frame's packets that did arrive.
    public var firstSequenceNumber: UInt16
    public var reason: DropReason

    public init(timestamp: UInt32, firstSequenceNumber: UInt16, reason: DropReason) {
        self.timestamp = timestamp
        self.firstSequenceNumber = firstSequenceNumber
        self.reason = reason
    }

    public var description: String {
        "frame at timestamp \(timestamp) (from packet \(firstSequenceNumber)) dropped: \(reason)"
    }
}

/// Why a frame was not handed on.
public enum DropReason: Hashable, Sendable, CustomStringConvertible {
    /// Packets were lost inside the frame, at its end, or just before it where its start may have been.
    case missingPackets
    /// The packets that arrived do not fit together (e.g. an FU-A continuation with no start).
    case inconsistent(String)

    public var description: String {
        switch self {
        case .missingPackets: return "packets of the frame were lost"
        case let .inconsistent(reason): return reason
        }
    }
}

/// What a depayloader reports after taking one packet, in the order it happened.
public enum DepayloadEvent: Hashable, Sendable {
    /// Sequence numbers that never arrived: `missing` packets after `after`.
    case gap(after: UInt16, missing: Int)
    /// A frame that could not be completed.
    case dropped(DroppedFrame)
    /// A complete frame.
    case frame(DepayloadedFrame)
}
