import CallsClient
import Testing
@testable import WebRTCTransport

@Suite struct DTLSPacketDemuxTests {
    @Test(
        arguments: [
            ([0x00, 0x01], PacketDemux.Kind.stun),  // STUN binding request type 0x0001
            ([0x01, 0x01], .stun),  // STUN binding success response 0x0101
            ([0x03, 0x00], .stun),  // last STUN byte
            ([0x04, 0x00], .dropped),  // 4..15 unassigned
            ([0x10, 0x00], .dropped),  // 16..19 ZRTP
            ([0x14, 0xFE, 0xFD], .dtls),  // 20 change_cipher_spec, DTLS 1.2
            ([0x16, 0xFE, 0xFF], .dtls),  // 22 handshake, DTLS 1.0
            ([0x17, 0xFE, 0xFD], .dtls),  // 23 application data
            ([0x3F, 0x00], .dtls),  // 63: last DTLS byte
            ([0x40, 0x00], .dropped),  // 64..79 TURN channel
            ([0x7F, 0x00], .dropped),  // 127
            ([0x80, 0x60], .rtp),  // v=2, PT 96
            ([0x80, 0xE0], .rtp),  // v=2, marker, PT 96
            ([0x81, 0xC8], .rtcp),  // v=2 RC=1, PT 200 SR
            ([0x81, 0xC9], .rtcp),  // PT 201 RR
            ([0x81, 0xCE], .rtcp),  // PT 206 PSFB
            ([0x80, 0xDF], .rtcp),  // PT 223, last RTCP
            ([0x80, 0xBF], .rtp),  // marker + PT 63
            ([0xBF, 0x60], .rtp),  // 191: last RTP byte
            ([0xC0, 0x60], .dropped),  // 192..255 (QUIC long header and others)
            ([0xFF], .dropped),
            ([0x80], .dropped),  // RTP first byte but no second byte
            ([], .dropped)  // empty
        ] as [([UInt8], PacketDemux.Kind)])
    func firstByteDecides(packet: [UInt8], kind: PacketDemux.Kind) {
        #expect(PacketDemux.kind(of: packet) == kind)
    }

    @Test func everyPacketIsCountedUnderItsKind() {
        let demux = PacketDemux()
        let packets: [[UInt8]] = [[0x00, 0x01], [0x16, 0xFE], [0x16, 0xFE], [0x80, 0x60], [0x81, 0xC8], [0xFF], []]
        for packet in packets { _ = demux.classify(packet) }
        #expect(demux.counts == PacketDemux.Counts(stun: 1, dtls: 2, rtp: 1, rtcp: 1, dropped: 2))
    }

    @Test func allFirstBytesClassifyWithoutTrapping() {
        var seen = Set<PacketDemux.Kind>()
        for first in 0...255 { seen.insert(PacketDemux.kind(of: [UInt8(first), 0x60])) }
        #expect(seen == [.stun, .dtls, .rtp, .dropped])
    }
}
