import ShareCore

// RFC 3550 §6.4.1 SR: Sender Report RTCP Packet (PT=200)
//
//         0                   1                   2                   3
//         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// header |V=2|P|    RC   |   PT=SR=200   |             length            |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                         SSRC of sender                        |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// sender |              NTP timestamp, most significant word             |
// info   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |             NTP timestamp, least significant word             |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                         RTP timestamp                         |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                     sender's packet count                     |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                      sender's octet count                     |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// report |                 report blocks (RC × 24 bytes)                 |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//        |                  profile-specific extensions                  |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// A sender report: the sender's wallclock/RTP-clock pair and counts, plus reception reports.
public struct SenderReport: Hashable, Sendable {
    public static let packetType = RTCPPacketType.senderReport

    public var ssrc: UInt32
    public var ntpTimestamp: NTPTimestamp
    /// The RTP timestamp that corresponds to `ntpTimestamp`.
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    /// At most 31.
    public var reports: [ReceptionReport]
    /// Profile-specific extension bytes after the report blocks, kept as they came.
    public var profileExtensions: [UInt8]

    public init(
        ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reports: [ReceptionReport] = [], profileExtensions: [UInt8] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
        self.profileExtensions = profileExtensions
    }

    /// Parses a buffer holding exactly one SR.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> SenderReport {
        try parse(RTCPFrame.single(bytes, packetType: packetType, name: "sender report"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> SenderReport {
        var reader = frame.bodyReader
        let ssrc = try reader.readUInt32("rtcp: sender report SSRC")
        let ntp = try reader.readUInt64("rtcp: sender report NTP timestamp")
        let rtp = try reader.readUInt32("rtcp: sender report RTP timestamp")
        let packets = try reader.readUInt32("rtcp: sender report packet count")
        let octets = try reader.readUInt32("rtcp: sender report octet count")
        let reports = try ReceptionReport.readBlocks(Int(frame.header.count), from: &reader, packet: "sender report")
        return SenderReport(
            ssrc: ssrc, ntpTimestamp: NTPTimestamp(rawValue: ntp), rtpTimestamp: rtp, packetCount: packets,
            octetCount: octets, reports: reports, profileExtensions: Array(reader.readRemaining()))
    }

    /// The packet on the wire; throws for more than 31 report blocks.
    public func serialize() throws(WireError) -> [UInt8] {
        try makeRTCPPacket(count: reports.count, packetType: Self.packetType, name: "sender report") { writer in
            writer.write(ssrc)
            writer.write(ntpTimestamp.rawValue)
            writer.write(rtpTimestamp)
            writer.write(packetCount)
            writer.write(octetCount)
            for report in reports { report.write(to: &writer) }
            writer.write(contentsOf: profileExtensions)
        }
    }
}
