import ShareCore

// RFC 3550 §6.4.2 RR: Receiver Report RTCP Packet (PT=201)
//
//         0                   1                   2                   3
//         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// header |V=2|P|    RC   |   PT=RR=201   |             length            |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//        |                     SSRC of packet sender                     |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// report |                 report blocks (RC × 24 bytes)                 |
//        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//        |                  profile-specific extensions                  |
//        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// A receiver report: reception reports from a participant that is not sending.
public struct ReceiverReport: Hashable, Sendable {
    public static let packetType = RTCPPacketType.receiverReport

    public var ssrc: UInt32
    /// At most 31.
    public var reports: [ReceptionReport]
    /// Profile-specific extension bytes after the report blocks, kept as they came.
    public var profileExtensions: [UInt8]

    public init(ssrc: UInt32, reports: [ReceptionReport] = [], profileExtensions: [UInt8] = []) {
        self.ssrc = ssrc
        self.reports = reports
        self.profileExtensions = profileExtensions
    }

    /// Parses a buffer holding exactly one RR.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> ReceiverReport {
        try parse(RTCPFrame.single(bytes, packetType: packetType, name: "receiver report"))
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> ReceiverReport {
        var reader = frame.bodyReader
        let ssrc = try reader.readUInt32("rtcp: receiver report SSRC")
        let reports = try ReceptionReport.readBlocks(Int(frame.header.count), from: &reader, packet: "receiver report")
        return ReceiverReport(ssrc: ssrc, reports: reports, profileExtensions: Array(reader.readRemaining()))
    }

    /// The packet on the wire; throws for more than 31 report blocks.
    public func serialize() throws(WireError) -> [UInt8] {
        try makeRTCPPacket(count: reports.count, packetType: Self.packetType, name: "receiver report") { writer in
            writer.write(ssrc)
            for report in reports { report.write(to: &writer) }
            writer.write(contentsOf: profileExtensions)
        }
    }
}
