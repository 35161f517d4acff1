import RTPWire
import ShareCore
import Testing

@Suite struct RTXTests {
    let original: [UInt8] = [
        0x90, 0xE0, 0x12, 0x34,  // V=2 X=1, M=1 PT=96, seq=0x1234
        0x00, 0x01, 0xE2, 0x40,  // timestamp
        0xDE, 0xAD, 0xBE, 0xEF,  // SSRC
        0xBE, 0xDE, 0x00, 0x01,  // one-byte extension, 1 word
        0x21, 0x00, 0x2A, 0x00,  // ID=2: transport seq 42 | padding
        0x01, 0x02, 0x03
    ]  // payload

    let retransmission: [UInt8] = [
        0x90, 0xE1, 0x00, 0x07,  // V=2 X=1, M=1 PT=97 (RTX, apt=96), RTX seq=7
        0x00, 0x01, 0xE2, 0x40,  // same timestamp
        0xCA, 0xFE, 0xBA, 0xBE,  // RTX SSRC
        0xBE, 0xDE, 0x00, 0x01,  // same extension
        0x21, 0x00, 0x2A, 0x00,
        0x12, 0x34,  // OSN: original sequence number
        0x01, 0x02, 0x03
    ]  // original payload

    @Test func wrapsAndUnwraps() throws {
        let packet = try RTPPacket.parse(original)
        let rtx = RTX.wrap(packet, rtxSSRC: 0xCAFE_BABE, rtxPayloadType: 97, rtxSequenceNumber: 7)
        #expect(try rtx.serialize() == retransmission)

        let received = try RTPPacket.parse(retransmission)
        let restored = try RTX.unwrap(received, originalSSRC: 0xDEAD_BEEF, associatedPayloadTypes: [97: 96])
        #expect(restored == packet)
        #expect(try restored.serialize() == original)
    }

    @Test func refusesWhatIsNotARetransmission() throws {
        let received = try RTPPacket.parse(retransmission)
        #expect(throws: WireError.invalid(what: "rtx: payload type", reason: "97 has no apt mapping")) {
            try RTX.unwrap(received, originalSSRC: 1, associatedPayloadTypes: [99: 98])
        }
        // A padding-only RTX packet (bandwidth probe) has no OSN.
        let probe = RTPPacket(
            payloadType: 97, sequenceNumber: 8, timestamp: 0, ssrc: 0xCAFE_BABE, payload: [], paddingSize: 200)
        #expect(throws: WireError.truncated(what: "rtx: original sequence number", got: 0, need: 2)) {
            try RTX.unwrap(probe, originalSSRC: 1, originalPayloadType: 96)
        }
    }
}
