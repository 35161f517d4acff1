import RTPWire
import ShareCore
import Testing

@Suite struct RTPHeaderExtensionTests {
    static let oneByteExample: [UInt8] = [
        0x90, 0xE0, 0x12, 0x34,  // V=2 P=0 X=1 CC=0, M=1 PT=96, seq=0x1234
        0x00, 0x01, 0xE2, 0x40,  // timestamp 123456
        0xDE, 0xAD, 0xBE, 0xEF,  // SSRC
        0xBE, 0xDE, 0x00, 0x03,  // one-byte form (0xBEDE), 3 words
        0x12, 0xAB, 0xCD, 0xEF,  // ID=1 L=2 (3 bytes): abs-send-time 0xABCDEF
        0x21, 0x00, 0x2A, 0x30,  // ID=2 L=1 (2 bytes): transport seq 42 | ID=3 L=0 (1 byte):
        0x30, 0x00, 0x00, 0x00,  //   mid "0" | padding ×3
        0x01, 0x02, 0x03, 0x04
    ]  // payload

    static let twoByteExample: [UInt8] = [
        0x90, 0x60, 0x00, 0x07,  // V=2 X=1, M=0 PT=96, seq=7
        0x00, 0x00, 0x03, 0xE8,  // timestamp 1000
        0x11, 0x22, 0x33, 0x44,  // SSRC
        0x10, 0x00, 0x00, 0x03,  // two-byte form (0x100, appbits 0), 3 words
        0x02, 0x02, 0x00, 0x2A,  // ID=2 length 2: transport seq 42
        0x14, 0x00, 0x03, 0x02,  // ID=20 length 0 | ID=3 length 2:
        0x61, 0x62, 0x00, 0x00,  //   mid "ab" | padding ×2
        0xAA
    ]  // payload

    let map = HeaderExtensionMap([
        1: HeaderExtensionURI.absSendTime,
        2: HeaderExtensionURI.transportWideSequenceNumber,
        3: HeaderExtensionURI.mid
    ])

    @Test func parsesOneByteForm() throws {
        let packet = try RTPPacket.parse(Self.oneByteExample)
        #expect(packet.headerExtension?.isOneByteForm == true)
        #expect(
            try packet.headerExtensionElements() == [
                HeaderExtensionElement(id: 1, data: [0xAB, 0xCD, 0xEF]),
                HeaderExtensionElement(id: 2, data: [0x00, 0x2A]),
                HeaderExtensionElement(id: 3, data: [0x30])
            ])
        #expect(try packet.headerExtensionValue(AbsSendTime.self, map: map) == AbsSendTime(rawValue: 0xAB_CDEF))
        #expect(try packet.headerExtensionValue(TransportSequenceNumber.self, map: map) == TransportSequenceNumber(42))
        #expect(try packet.headerExtensionValue(MediaIdentification.self, map: map) == MediaIdentification("0"))
        #expect(packet.payload == [1, 2, 3, 4])
        #expect(try packet.serialize() == Self.oneByteExample)
    }

    @Test func buildsOneByteFormFromValues() throws {
        var packet = RTPPacket(
            marker: true, payloadType: 96, sequenceNumber: 0x1234, timestamp: 123_456, ssrc: 0xDEAD_BEEF,
            payload: [1, 2, 3, 4])
        let values: [HeaderExtensionElement?] = [
            map.element(AbsSendTime(rawValue: 0xAB_CDEF)),
            map.element(TransportSequenceNumber(42)),
            map.element(MediaIdentification("0"))
        ]
        try packet.setHeaderExtensionElements(values.compactMap { $0 })
        #expect(try packet.serialize() == Self.oneByteExample)
    }

    @Test func parsesAndBuildsTwoByteForm() throws {
        let packet = try RTPPacket.parse(Self.twoByteExample)
        #expect(packet.headerExtension?.isTwoByteForm == true)
        let elements = try packet.headerExtensionElements()
        #expect(
            elements == [
                HeaderExtensionElement(id: 2, data: [0x00, 0x2A]),
                HeaderExtensionElement(id: 20, data: []),
                HeaderExtensionElement(id: 3, data: [0x61, 0x62])
            ])
        #expect(try packet.headerExtensionValue(MediaIdentification.self, map: map)?.value == "ab")
        // ID 20 and an empty element do not fit the one-byte form, so the two-byte form is chosen.
        var rebuilt = packet
        try rebuilt.setHeaderExtensionElements(elements)
        #expect(try rebuilt.serialize() == Self.twoByteExample)
    }

    @Test func choosesTwoByteFormOnlyWhenNeeded() throws {
        let fits = [HeaderExtensionElement(id: 14, data: Array(repeating: 1, count: 16))]
        #expect(try RTPHeaderExtension(elements: fits).profile == 0xBEDE)
        let id15 = [HeaderExtensionElement(id: 15, data: [1])]
        #expect(try RTPHeaderExtension(elements: id15).profile == 0x1000)
        let long = [HeaderExtensionElement(id: 1, data: Array(repeating: 1, count: 17))]
        #expect(try RTPHeaderExtension(elements: long).profile == 0x1000)
        let empty = [HeaderExtensionElement(id: 1, data: [])]
        #expect(try RTPHeaderExtension(elements: empty).data == [0x01, 0x00, 0x00, 0x00])
        #expect(throws: WireError.self) { try RTPHeaderExtension(elements: [HeaderExtensionElement(id: 0, data: [])]) }
        #expect(throws: WireError.self) {
            try RTPHeaderExtension(elements: [HeaderExtensionElement(id: 1, data: Array(repeating: 0, count: 256))])
        }
    }

    @Test func oneByteID15StopsParsing() throws {
        let ext = RTPHeaderExtension(
            profile: 0xBEDE,
            data: [
                0x10, 0x07,  // ID=1 L=0: 0x07
                0xF0, 0x55,  // ID=15: reserved, stop here
                0x20, 0x66, 0x00, 0x00
            ])  // never read
        #expect(try ext.elements() == [HeaderExtensionElement(id: 1, data: [0x07])])
    }

    @Test func twoByteApplicationBitsAreAccepted() throws {
        let ext = RTPHeaderExtension(profile: 0x100F, data: [0x05, 0x01, 0x09, 0x00])
        #expect(ext.isTwoByteForm)
        #expect(try ext.elements() == [HeaderExtensionElement(id: 5, data: [0x09])])
    }

    @Test func refusesMalformedExtensions() {
        let overrun = RTPHeaderExtension(profile: 0xBEDE, data: [0x13, 0x01, 0x02, 0x03])  // L=3 needs 4 bytes
        #expect(throws: WireError.truncated(what: "rtp: one-byte header extension element", got: 3, need: 4)) {
            try overrun.elements()
        }
        let noLength = RTPHeaderExtension(profile: 0x1000, data: [0x00, 0x00, 0x00, 0x05])
        #expect(throws: WireError.truncated(what: "rtp: two-byte header extension length", got: 0, need: 1)) {
            try noLength.elements()
        }
        let foreign = RTPHeaderExtension(profile: 0xABCD, data: [])
        #expect(
            throws: WireError.unsupported(
                what: "rtp: header extension", reason: "profile 0xabcd is neither RFC 8285 form")
        ) {
            try foreign.elements()
        }
    }

    @Test func absSendTimeConvertsSecondsAndDurations() throws {
        // 6.18 fixed point: 1.5 s = 0x060000.
        #expect(AbsSendTime(seconds: 1.5).rawValue == 0x06_0000)
        #expect(AbsSendTime(.milliseconds(1500)).rawValue == 0x06_0000)
        // It wraps every 64 s.
        #expect(AbsSendTime(seconds: 65.5).rawValue == AbsSendTime(seconds: 1.5).rawValue)
        #expect(AbsSendTime(.seconds(64 * 1000) + .milliseconds(250)).rawValue == 0x01_0000)
        // Largest value, just under 64 s.
        #expect(AbsSendTime(rawValue: 0xFF_FFFF).seconds == 64 - 1.0 / 262_144)
        // Rounding to the nearest 2^-18 s (3814.697 ns; half of it is 1907.35 ns).
        #expect(AbsSendTime(.nanoseconds(1907)).rawValue == 0)
        #expect(AbsSendTime(.nanoseconds(1908)).rawValue == 1)
        #expect(AbsSendTime(seconds: 1907e-9).rawValue == 0)
        #expect(AbsSendTime(seconds: 1908e-9).rawValue == 1)
        #expect(AbsSendTime(seconds: .nan).rawValue == 0)
        #expect(AbsSendTime(seconds: -0.5).rawValue == AbsSendTime(seconds: 63.5).rawValue)
        #expect(AbsSendTime(.milliseconds(-500)).rawValue == AbsSendTime(seconds: 63.5).rawValue)
        #expect(AbsSendTime(rawValue: 0x12_3456).extensionData == [0x12, 0x34, 0x56])
        #expect(throws: WireError.self) { try AbsSendTime(extensionData: [1, 2]) }
    }

    @Test func typedValuesCheckTheirSize() {
        #expect(throws: WireError.self) { try TransportSequenceNumber(extensionData: [1, 2, 3]) }
        #expect(throws: WireError.self) { try MediaIdentification(extensionData: []) }
        #expect(throws: WireError.self) { try MediaIdentification(extensionData: [0xFF, 0xFE]) }
    }

    @Test func mapKeepsIDsAndURIsOneToOne() {
        var map = HeaderExtensionMap()
        map.register(id: 3, uri: HeaderExtensionURI.mid)
        map.register(id: 4, uri: HeaderExtensionURI.mid)  // the mid moves to 4
        #expect(map.id(for: HeaderExtensionURI.mid) == 4)
        #expect(map.uri(for: 3) == nil)
        map.register(id: 4, uri: HeaderExtensionURI.rtpStreamID)  // 4 now means rid
        #expect(map.id(for: HeaderExtensionURI.mid) == nil)
        #expect(map.entries.map(\.uri) == ["urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"])
        #expect(HeaderExtensionURI.repairedRTPStreamID == "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id")
        #expect(map.element(AbsSendTime(rawValue: 1)) == nil, "not negotiated")
    }

    @Test func elementsRoundTrip() throws {
        let sets: [[HeaderExtensionElement]] = [
            [],
            [HeaderExtensionElement(id: 1, data: [1])],
            [HeaderExtensionElement(id: 14, data: Array(0..<16)), HeaderExtensionElement(id: 2, data: [9, 9])],
            [
                HeaderExtensionElement(id: 255, data: Array(repeating: 7, count: 255)),
                HeaderExtensionElement(id: 1, data: [])
            ]
        ]
        for elements in sets {
            #expect(try RTPHeaderExtension(elements: elements).elements() == elements)
        }
    }
}
