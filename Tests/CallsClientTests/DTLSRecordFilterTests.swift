@testable import CallsClient
import Testing
@testable import WebRTCTransport

@Suite struct DTLSRecordFilterTests {
    /// A record header: type, DTLS 1.2, epoch, sequence 0, length; then `body`.
    static func record(_ type: UInt8, epoch: UInt16 = 0, _ body: [UInt8], version: UInt16 = 0xFEFD) -> [UInt8] {
        [
            type, UInt8(version >> 8), UInt8(version & 0xFF), UInt8(epoch >> 8), UInt8(epoch & 0xFF),
            0, 0, 0, 0, 0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)
        ] + body
    }

    static let changeCipherSpec = record(20, [1])
    static let finished = record(22, epoch: 1, Array(repeating: 0xAB, count: 40))  // protected: opaque
    static let clientHelloFragment = record(
        22,
        [
            0x01,  // msg_type client_hello
            0x00, 0x00, 0x04,  // length 4
            0x00, 0x00,  // message_seq 0
            0x00, 0x00, 0x00,  // fragment_offset 0
            0x00, 0x00, 0x04,  // fragment_length 4
            0xFE, 0xFD, 0x00, 0x00
        ])

    @Test func aValidFlightPassesWhole() {
        let flight = Self.clientHelloFragment + Self.changeCipherSpec + Self.finished
        let result = DTLSRecordFilter().filter(flight)
        #expect(result.kept == flight)
        #expect(result.keptRecords == 3)
        #expect(result.rejections.isEmpty)
    }

    @Test func twoHandshakeMessagesInOneRecordPass() {
        let two = Self.record(
            22,
            [
                0x0E, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,  // server_hello_done, empty
                0x0E, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0
            ])
        #expect(DTLSRecordFilter().filter(two).kept == two)
    }

    @Test(
        arguments: [
            // (datagram, rejection)
            ([0x16], DTLSRecordFilter.Rejection.headerCutShort(bytesLeft: 1)),
            ([0x16, 0xFE, 0xFD], .headerCutShort(bytesLeft: 3)),
            (
                [0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 1, 2],
                .lengthBeyondDatagram(length: 65535, bytesLeft: 2)
            ),
            (record(0x17, epoch: 1, [1, 2, 3, 4]), .protectedRecordTooShort(length: 4)),
            (record(0x17, epoch: 1, Array(repeating: 0, count: 23)), .protectedRecordTooShort(length: 23)),
            (record(0x18, [1, 2, 3]), .unknownContentType(0x18)),
            (record(0x16, [1], version: 0x0303), .unknownVersion(0x0303)),
            (record(0x17, epoch: 2, Array(repeating: 0, count: 40)), .unexpectedEpoch(2)),
            (
                record(0x17, [1, 2, 3]),
                .malformedPlaintext(contentType: 0x17, reason: "application data before any keys")
            ),
            (
                record(0x14, [2]),
                .malformedPlaintext(contentType: 0x14, reason: "change_cipher_spec is not the single byte 1")
            ),
            (record(0x15, []), .malformedPlaintext(contentType: 0x15, reason: "an alert of 0 bytes, not 2")),
            (
                record(0x16, [0x01, 0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 4, 1, 2, 3, 4]),
                .malformedPlaintext(contentType: 0x16, reason: "fragment 2+4 beyond its message of 4 bytes")
            ),
            (
                record(0x16, [0x01, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9, 1, 2]),
                .malformedPlaintext(contentType: 0x16, reason: "a fragment of 9 bytes runs past its record")
            )
        ] as [([UInt8], DTLSRecordFilter.Rejection)])
    func anInvalidRecordIsLeftOutWithItsReason(datagram: [UInt8], rejection: DTLSRecordFilter.Rejection) {
        let result = DTLSRecordFilter().filter(datagram)
        #expect(result.kept.isEmpty)
        #expect(result.rejections == [rejection])
    }

    @Test func anInvalidRecordBetweenValidOnesIsLeftOutAlone() {
        let bad = Self.record(0x17, epoch: 1, [9, 9, 9, 9])
        let result = DTLSRecordFilter().filter(Self.changeCipherSpec + bad + Self.finished)
        #expect(result.kept == Self.changeCipherSpec + Self.finished)
        #expect(result.rejections == [.protectedRecordTooShort(length: 4)])
    }

    @Test func aPlaintextAlertCountsOnlyDuringTheHandshake() {
        let fatal = Self.record(0x15, [2, 40])  // fatal handshake_failure
        #expect(DTLSRecordFilter(handshakeComplete: false).filter(fatal).kept == fatal)
        #expect(DTLSRecordFilter(handshakeComplete: true).filter(fatal).kept.isEmpty)
    }

    @Test func aDatagramCutInsideItsSecondRecordKeepsTheFirst() {
        let datagram = Self.changeCipherSpec + Array(Self.finished.prefix(20))
        let result = DTLSRecordFilter().filter(datagram)
        #expect(result.kept == Self.changeCipherSpec)
        #expect(result.rejections == [.lengthBeyondDatagram(length: 40, bytesLeft: 7)])
    }

    /// Every prefix of a valid flight is filtered without a trap, and keeps only whole records.
    @Test func everyPrefixIsFilteredSafely() {
        let flight = Self.clientHelloFragment + Self.changeCipherSpec + Self.finished
        for end in 0...flight.count {
            let kept = DTLSRecordFilter().filter(Array(flight[..<end])).kept
            #expect(flight.starts(with: kept))
        }
    }
}
