import ShareCore

// RFC 3550 §5.1 RTP Fixed Header Fields
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                           timestamp                           |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |           synchronization source (SSRC) identifier            |
// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// |            contributing source (CSRC) identifiers             |
// |                             ....                              |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |      defined by profile       |           length              |  (X=1, §5.3.1)
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                        header extension                       |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                            payload ...    | padding | count   |  (P=1)
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// An RTP packet (RFC 3550 §5.1). The version is always 2; everything else is a plain field.
public struct RTPPacket: Hashable, Sendable {
    /// The size of the fixed header, before CSRCs and extension.
    public static let fixedHeaderSize = 12
    /// At most 15 CSRCs fit the 4-bit CC field.
    public static let maximumCSRCCount = 15

    public var marker: Bool
    /// 7 bits.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: [UInt32]
    /// The header extension (X=1), raw; see `headerExtensionElements()` for RFC 8285 elements.
    public var headerExtension: RTPHeaderExtension?
    public var payload: [UInt8]
    /// Padding bytes after the payload, the final count byte included; 0 means no padding (P=0).
    public var paddingSize: UInt8

    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil, payload: [UInt8], paddingSize: UInt8 = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.payload = payload
        self.paddingSize = paddingSize
    }

    /// Parses one RTP packet occupying all of `bytes`.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> RTPPacket {
        var reader = ByteReader(bytes)
        guard bytes.count >= fixedHeaderSize else {
            throw .truncated(what: "rtp: header", got: bytes.count, need: fixedHeaderSize)
        }
        let first = try reader.readUInt8("rtp: header")
        let version = first >> 6
        guard version == 2 else {
            throw .invalid(what: "rtp: version", reason: "expected 2, got \(version)")
        }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = try reader.readUInt8("rtp: header")
        let sequenceNumber = try reader.readUInt16("rtp: sequence number")
        let timestamp = try reader.readUInt32("rtp: timestamp")
        let ssrc = try reader.readUInt32("rtp: SSRC")

        var csrcs: [UInt32] = []
        csrcs.reserveCapacity(csrcCount)
        for _ in 0..<csrcCount { csrcs.append(try reader.readUInt32("rtp: CSRC list")) }

        var headerExtension: RTPHeaderExtension?
        if hasExtension {
            let profile = try reader.readUInt16("rtp: header extension")
            let words = Int(try reader.readUInt16("rtp: header extension"))
            let data = try reader.readBytes(words * 4, "rtp: header extension data")
            headerExtension = RTPHeaderExtension(profile: profile, data: Array(data))
        }

        var body = reader.readRemaining()
        var paddingSize: UInt8 = 0
        if hasPadding {
            guard let count = body.last else {
                throw .truncated(what: "rtp: padding", got: 0, need: 1)
            }
            guard count > 0 else {
                throw .invalid(what: "rtp: padding", reason: "padding bit set but padding count is 0")
            }
            guard Int(count) <= body.count else {
                throw .invalid(
                    what: "rtp: padding",
                    reason: "padding count \(count) is longer than the \(body.count) bytes after the header")
            }
            paddingSize = count
            body = body.dropLast(Int(count))
        }

        return RTPPacket(
            marker: second & 0x80 != 0, payloadType: second & 0x7F, sequenceNumber: sequenceNumber,
            timestamp: timestamp, ssrc: ssrc, csrcs: csrcs, headerExtension: headerExtension,
            payload: Array(body), paddingSize: paddingSize)
    }

    /// The packet's size on the wire.
    public var serializedSize: Int {
        var size = Self.fixedHeaderSize + 4 * csrcs.count + payload.count + Int(paddingSize)
        if let headerExtension { size += 4 + headerExtension.paddedDataCount }
        return size
    }

    /// The packet on the wire. An extension whose data is not a multiple of 4 bytes is padded with
    /// zeros. Throws for more than 15 CSRCs, a payload type above 127, or an oversized extension.
    public func serialize() throws(WireError) -> [UInt8] {
        guard csrcs.count <= Self.maximumCSRCCount else {
            throw .invalid(what: "rtp: CSRC list", reason: "\(csrcs.count) CSRCs, at most 15 fit")
        }
        guard payloadType <= 0x7F else {
            throw .invalid(what: "rtp: payload type", reason: "\(payloadType) does not fit 7 bits")
        }
        var writer = ByteWriter(capacity: serializedSize)
        var first: UInt8 = 0x80 | UInt8(csrcs.count)
        if paddingSize > 0 { first |= 0x20 }
        if headerExtension != nil { first |= 0x10 }
        writer.write(first)
        writer.write((marker ? 0x80 : 0) | payloadType)
        writer.write(sequenceNumber)
        writer.write(timestamp)
        writer.write(ssrc)
        for csrc in csrcs { writer.write(csrc) }
        if let headerExtension {
            let words = headerExtension.paddedDataCount / 4
            guard words <= Int(UInt16.max) else {
                throw .invalid(
                    what: "rtp: header extension",
                    reason: "\(headerExtension.data.count) bytes do not fit the 16-bit length field")
            }
            writer.write(headerExtension.profile)
            writer.write(UInt16(words))
            writer.write(contentsOf: headerExtension.data)
            writer.writeZeros(headerExtension.paddedDataCount - headerExtension.data.count)
        }
        writer.write(contentsOf: payload)
        if paddingSize > 0 {
            writer.writeZeros(Int(paddingSize) - 1)
            writer.write(paddingSize)
        }
        return writer.bytes
    }
}

/// The RFC 3550 §5.3.1 header extension as it travels: a 16-bit profile-defined value and data
/// that is a whole number of 32-bit words on the wire.
public struct RTPHeaderExtension: Hashable, Sendable {
    /// `0xBEDE` for RFC 8285 one-byte elements, `0x100X` for two-byte elements.
    public var profile: UInt16
    public var data: [UInt8]

    public init(profile: UInt16, data: [UInt8]) {
        self.profile = profile
        self.data = data
    }

    /// The data length rounded up to a whole number of 32-bit words.
    var paddedDataCount: Int { (data.count + 3) & ~3 }
}
