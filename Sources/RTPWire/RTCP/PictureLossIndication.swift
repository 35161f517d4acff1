import ShareCore

// RFC 4585 §6.3.1 Picture Loss Indication (PT=206 PSFB, FMT=1)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|  FMT=1  |    PT=206     |          length=2             |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of packet sender                        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of media source                         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// No FCI: the receiver lost part of a picture and asks the sender for a keyframe.

/// A receiver asks the sender of `mediaSSRC` for a keyframe.
public struct PictureLossIndication: Hashable, Sendable {
    public static let packetType = RTCPPacketType.payloadSpecificFeedback
    public static let format = RTCPFeedbackFormat.pictureLossIndication

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    /// Parses a buffer holding exactly one PLI.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> PictureLossIndication {
        try parse(RTCPFrame.single(bytes, packetType: packetType, format: format, name: "picture loss indication"))
    }

    /// Any FCI bytes (there should be none) are ignored.
    static func parse(_ frame: RTCPFrame) throws(WireError) -> PictureLossIndication {
        var reader = frame.bodyReader
        let ssrcs = try reader.readFeedbackSSRCs("rtcp: PLI")
        return PictureLossIndication(senderSSRC: ssrcs.sender, mediaSSRC: ssrcs.media)
    }

    public func serialize() -> [UInt8] {
        var writer = ByteWriter(capacity: 12)
        writer.write(UInt8(0x80 | Self.format))
        writer.write(Self.packetType)
        writer.write(UInt16(2))
        writer.write(senderSSRC)
        writer.write(mediaSSRC)
        return writer.bytes
    }
}
