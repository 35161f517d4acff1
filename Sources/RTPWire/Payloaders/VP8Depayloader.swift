// RFC 7741 RTP Payload Format for VP8 Video, receiving side. A frame starts with a packet whose
// descriptor has S=1 and PID=0, and ends at the marker bit; its first payload byte holds the P bit
// (VP8FrameHeader.swift) that tells a key frame.

import ShareCore

/// One VP8 RTP payload: its descriptor and the piece of the frame after it.
struct VP8PacketContent: Sendable {
    var descriptor: VP8PayloadDescriptor
    var data: ArraySlice<UInt8>

    static func parse(_ payload: [UInt8]) throws(WireError) -> VP8PacketContent {
        var reader = ByteReader(payload)
        let descriptor = try VP8PayloadDescriptor.parse(&reader)
        guard !reader.isAtEnd else {
            throw .truncated(what: "vp8: payload after the descriptor", got: 0, need: 1)
        }
        return VP8PacketContent(descriptor: descriptor, data: reader.readRemaining())
    }
}

/// A VP8 frame being put back together from its packets.
struct VP8FrameBuilder: FrameBuilder {
    private var bytes: [UInt8] = []
    private var isKeyframe = false
    private var lastPartitionIndex: UInt8 = 0

    var byteCount: Int { bytes.count }

    mutating func add(_ piece: VP8PacketContent, isFirstPacket: Bool) -> String? {
        let descriptor = piece.descriptor
        if isFirstPacket {
            guard descriptor.startsFrame else {
                return "the frame's first packet does not start partition 0 (S=1, PID=0)"
            }
            isKeyframe = VP8FrameHeader.isKeyframe(firstByte: piece.data.first ?? 0xFF)
        } else {
            if descriptor.startsFrame { return "partition 0 started twice in one frame" }
            if descriptor.partitionIndex < lastPartitionIndex { return "partition index went backwards" }
        }
        lastPartitionIndex = descriptor.partitionIndex
        bytes.append(contentsOf: piece.data)
        return nil
    }

    var incompleteReason: String? { bytes.isEmpty ? "the frame holds no data" : nil }

    func build() -> (bytes: [UInt8], isKeyframe: Bool) { (bytes, isKeyframe) }
}

/// Puts VP8 frames back together from RTP payloads (RFC 7741).
///
/// Feed packets in sequence-number order (the jitter buffer's job); late and duplicate packets
/// (up to 1000 behind) are ignored, and a packet further behind is taken as the sender numbering
/// afresh. A frame is the run of packets with one timestamp and picture ID, from S=1/PID=0 to the
/// marker bit; one with a lost packet is reported dropped, never handed on. Because a frame's first
/// packet is marked, the frame after a loss is kept when it arrives whole. A packet whose
/// descriptor is malformed throws and is treated as lost.
public struct VP8Depayloader: Sendable {
    private var assembler: FrameAssembler<VP8FrameBuilder>

    /// - Parameter maximumFrameSize: frames larger than this are dropped.
    public init(maximumFrameSize: Int = 8 << 20) {
        assembler = FrameAssembler(maximumFrameSize: maximumFrameSize)
    }

    /// Takes one RTP packet's payload and header fields; returns what that settled.
    public mutating func push(
        _ payload: [UInt8], sequenceNumber: UInt16, timestamp: UInt32,
        marker: Bool
    ) throws(WireError) -> [DepayloadEvent] {
        guard !assembler.isLateOrDuplicate(sequenceNumber) else { return [] }
        let content = try VP8PacketContent.parse(payload)
        return assembler.push(
            content, sequenceNumber: sequenceNumber, timestamp: timestamp,
            pictureID: content.descriptor.pictureID?.value, marker: marker,
            startsFrame: content.descriptor.startsFrame)
    }

    /// Settles a frame still open when the stream ends (reported dropped: its marker never came).
    public mutating func finish() -> [DepayloadEvent] { assembler.finish() }
}
