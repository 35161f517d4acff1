// RFC 7741 RTP Payload Format for VP8 Video: each payload is a payload descriptor
// (VP8PayloadDescriptor.swift) followed by a piece of the VP8 frame.

import ShareCore

/// Cuts VP8 frames into RTP payloads (RFC 7741).
///
/// Every packet carries a 4-byte descriptor: X=1, I=1, M=1 with a 15-bit picture ID that counts
/// frames and wraps at 0x8000, PID=0 (the frame goes as one partition), and S=1 on the frame's
/// first packet only. Packets are of nearly equal size, none over `maxPayloadSize`; the last has
/// the marker bit.
public struct VP8Payloader: Hashable, Sendable {
    /// The largest RTP payload to produce, in bytes (more than the 4-byte descriptor).
    public var maxPayloadSize: Int
    /// The picture ID the next frame gets (15 bits).
    public private(set) var nextPictureID: UInt16

    /// - Parameter firstPictureID: where picture IDs start; a sender picks it at random.
    public init(maxPayloadSize: Int = 1200, firstPictureID: UInt16 = 0) {
        self.maxPayloadSize = maxPayloadSize
        self.nextPictureID = firstPictureID & 0x7FFF
    }

    /// The RTP payloads for one encoded VP8 frame.
    /// - Parameter isNonReference: no later frame refers to this one (the descriptor's N bit).
    public mutating func payload(_ frame: [UInt8], isNonReference: Bool = false) throws(WireError) -> [RTPPayloadUnit] {
        guard !frame.isEmpty else {
            throw .invalid(what: "vp8: frame", reason: "an encoded frame has at least its 3-byte frame tag")
        }
        var descriptor = VP8PayloadDescriptor(
            isNonReference: isNonReference, startsPartition: true, partitionIndex: 0,
            pictureID: .long(nextPictureID))
        let descriptorSize = descriptor.encodedSize
        guard maxPayloadSize > descriptorSize else {
            throw .invalid(
                what: "vp8: max payload size",
                reason: "\(maxPayloadSize) bytes leave no room after the \(descriptorSize)-byte descriptor")
        }
        nextPictureID = (nextPictureID &+ 1) & 0x7FFF
        let chunks = balancedChunks(count: frame.count, maxChunk: maxPayloadSize - descriptorSize)
        return chunks.enumerated().map { position, range in
            descriptor.startsPartition = position == 0
            var writer = ByteWriter(capacity: descriptorSize + range.count)
            descriptor.serialize(into: &writer)
            writer.write(contentsOf: frame[range])
            return RTPPayloadUnit(payload: writer.bytes, marker: position == chunks.count - 1)
        }
    }
}
