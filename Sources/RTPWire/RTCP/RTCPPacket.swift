import ShareCore

/// Any one RTCP packet. Types sharectl does not read are kept whole as `.unknown`, not refused.
public enum RTCPPacket: Hashable, Sendable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    case sourceDescription(SourceDescription)
    case goodbye(Goodbye)
    case pictureLossIndication(PictureLossIndication)
    case fullIntraRequest(FullIntraRequest)
    case genericNACK(GenericNACK)
    case receiverEstimatedMaxBitrate(ReceiverEstimatedMaxBitrate)
    case transportWideFeedback(TransportWideFeedback)
    /// A packet of another type or feedback format (APP, XR, SLI, …): its type and the whole
    /// packet, header included, without padding.
    case unknown(packetType: UInt8, bytes: [UInt8])

    /// Parses a buffer holding exactly one RTCP packet.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> RTCPPacket {
        let frame = try RTCPFrame.read(bytes, at: 0, index: 1)
        guard frame.header.packetSize == bytes.count else {
            throw .invalid(
                what: "rtcp: packet",
                reason: "length field says \(frame.header.packetSize) bytes but the buffer holds \(bytes.count)")
        }
        return try parse(frame)
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> RTCPPacket {
        let header = frame.header
        switch (header.packetType, header.count) {
        case (RTCPPacketType.senderReport, _):
            return .senderReport(try SenderReport.parse(frame))
        case (RTCPPacketType.receiverReport, _):
            return .receiverReport(try ReceiverReport.parse(frame))
        case (RTCPPacketType.sourceDescription, _):
            return .sourceDescription(try SourceDescription.parse(frame))
        case (RTCPPacketType.goodbye, _):
            return .goodbye(try Goodbye.parse(frame))
        case (RTCPPacketType.transportFeedback, RTCPFeedbackFormat.genericNACK):
            return .genericNACK(try GenericNACK.parse(frame))
        case (RTCPPacketType.transportFeedback, RTCPFeedbackFormat.transportWideFeedback):
            return .transportWideFeedback(try TransportWideFeedback.parse(frame))
        case (RTCPPacketType.payloadSpecificFeedback, RTCPFeedbackFormat.pictureLossIndication):
            return .pictureLossIndication(try PictureLossIndication.parse(frame))
        case (RTCPPacketType.payloadSpecificFeedback, RTCPFeedbackFormat.fullIntraRequest):
            return .fullIntraRequest(try FullIntraRequest.parse(frame))
        case (RTCPPacketType.payloadSpecificFeedback, RTCPFeedbackFormat.applicationLayerFeedback)
        where ReceiverEstimatedMaxBitrate.isREMB(frame):
            return .receiverEstimatedMaxBitrate(try ReceiverEstimatedMaxBitrate.parse(frame))
        default:
            return .unknown(packetType: header.packetType, bytes: unknownBytes(frame))
        }
    }

    /// The packet's bytes with any padding removed: P cleared, the body zero-filled to a 32-bit
    /// boundary and the length field made to match.
    private static func unknownBytes(_ frame: RTCPFrame) -> [UInt8] {
        var writer = ByteWriter(capacity: RTCPHeader.size + frame.body.count + 3)
        writer.write(0x80 | frame.header.count)
        writer.write(frame.header.packetType)
        writer.write(UInt16(0))
        writer.write(contentsOf: frame.bytes[frame.body])
        writer.writeZeros((4 - writer.count % 4) % 4)
        writer.patch(UInt16(truncatingIfNeeded: writer.count / 4 - 1), at: 2)
        return writer.bytes
    }

    /// The packet on the wire. An `.unknown` packet's bytes must be one whole unpadded packet.
    public func serialize() throws(WireError) -> [UInt8] {
        switch self {
        case let .senderReport(packet): return try packet.serialize()
        case let .receiverReport(packet): return try packet.serialize()
        case let .sourceDescription(packet): return try packet.serialize()
        case let .goodbye(packet): return try packet.serialize()
        case let .pictureLossIndication(packet): return packet.serialize()
        case let .fullIntraRequest(packet): return try packet.serialize()
        case let .genericNACK(packet): return try packet.serialize()
        case let .receiverEstimatedMaxBitrate(packet): return try packet.serialize()
        case let .transportWideFeedback(packet): return try packet.serialize()
        case let .unknown(packetType, bytes):
            let frame = try RTCPFrame.single(bytes, packetType: packetType, name: "packet of type \(packetType)")
            guard !frame.header.padding else {
                throw .invalid(
                    what: "rtcp: packet of type \(packetType)", reason: "unknown packets are kept without padding")
            }
            return bytes
        }
    }
}

/// A compound RTCP packet (RFC 3550 §6.1): RTCP packets back to back in one datagram.
public enum RTCPCompound {
    /// Every packet in `bytes`, in order. Each packet's header is checked: version 2, a length
    /// (32-bit words minus one) that stays inside the buffer, and a padding count that fits. RFC 3550
    /// puts padding only on the last packet, but libwebrtc pads transport-wide feedback wherever it
    /// sits in the compound; each packet's length covers its own padding, so it is accepted anywhere. Any failure refuses the whole compound with an error that
    /// names the packet. Reduced-size RTCP (RFC 5506), which need not start with SR or RR, is
    /// accepted.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> [RTCPPacket] {
        guard !bytes.isEmpty else {
            throw .truncated(what: "rtcp: packet", got: 0, need: RTCPHeader.size)
        }
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            let frame = try RTCPFrame.read(bytes, at: offset, index: packets.count + 1)
            offset += frame.header.packetSize
            packets.append(try RTCPPacket.parse(frame))
        }
        return packets
    }

    /// The packets back to back.
    public static func serialize(_ packets: [RTCPPacket]) throws(WireError) -> [UInt8] {
        var bytes: [UInt8] = []
        for packet in packets { bytes += try packet.serialize() }
        return bytes
    }
}
