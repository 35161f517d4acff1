import ShareCore

// RFC 4585 §6.1 Common Packet Format for Feedback Messages (PT=205 RTPFB, PT=206 PSFB)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|   FMT   |       PT      |          length               |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of packet sender                        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                  SSRC of media source                         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// :            Feedback Control Information (FCI)                 :

/// Feedback message types (FMT) sharectl reads.
public enum RTCPFeedbackFormat {
    /// RTPFB FMT=1, RFC 4585 §6.2.1.
    public static let genericNACK: UInt8 = 1
    /// RTPFB FMT=15, draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1.
    public static let transportWideFeedback: UInt8 = 15
    /// PSFB FMT=1, RFC 4585 §6.3.1.
    public static let pictureLossIndication: UInt8 = 1
    /// PSFB FMT=4, RFC 5104 §4.3.1.
    public static let fullIntraRequest: UInt8 = 4
    /// PSFB FMT=15, application layer feedback (REMB among others), RFC 4585 §6.4.
    public static let applicationLayerFeedback: UInt8 = 15
}

extension ByteReader {
    /// Reads the sender and media SSRC words that open every feedback message.
    mutating func readFeedbackSSRCs(_ name: StaticString) throws(WireError) -> (sender: UInt32, media: UInt32) {
        let sender = try readUInt32(name)
        let media = try readUInt32(name)
        return (sender, media)
    }
}
