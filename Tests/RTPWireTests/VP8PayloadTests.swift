import RTPWire
import ShareCore
import Testing

private func frames(_ events: [DepayloadEvent]) -> [DepayloadedFrame] {
    events.compactMap { if case let .frame(frame) = $0 { frame } else { nil } }
}

private func drops(_ events: [DepayloadEvent]) -> [DroppedFrame] {
    events.compactMap { if case let .dropped(drop) = $0 { drop } else { nil } }
}

@Suite struct VP8PayloadDescriptorTests {
    @Test func parsesA15BitPictureID() throws {
        let payload: [UInt8] = [
            0x90,  // X=1 R=0 N=0 S=1 R=0 PID=0
            0x80,  // I=1 L=0 T=0 K=0
            0x92, 0x34,  // M=1, picture ID 0x1234
            0x10
        ]  // VP8 payload: frame tag with P=0 (key frame)
        var reader = ByteReader(payload)
        let descriptor = try VP8PayloadDescriptor.parse(&reader)
        #expect(descriptor == VP8PayloadDescriptor(startsPartition: true, pictureID: .long(0x1234)))
        #expect(descriptor.startsFrame)
        #expect(reader.offset == 4)
        var writer = ByteWriter()
        descriptor.serialize(into: &writer)
        #expect(writer.bytes == Array(payload.prefix(4)))
    }

    @Test func parsesEveryOptionalField() throws {
        let payload: [UInt8] = [
            0xA3,  // X=1 N=1 S=0 PID=3
            0xF0,  // I=1 L=1 T=1 K=1
            0x15,  // M=0, 7-bit picture ID 0x15
            0x07,  // TL0PICIDX 7
            0x65,  // TID=1 Y=1 KEYIDX=5
            0xAA
        ]
        var reader = ByteReader(payload)
        let descriptor = try VP8PayloadDescriptor.parse(&reader)
        #expect(
            descriptor
                == VP8PayloadDescriptor(
                    isNonReference: true, startsPartition: false, partitionIndex: 3,
                    pictureID: .short(0x15), tl0PictureIndex: 7, temporalLayerID: 1,
                    isLayerSync: true, keyIndex: 5))
        #expect(descriptor.pictureID?.value == 0x15)
        var writer = ByteWriter()
        descriptor.serialize(into: &writer)
        #expect(writer.bytes == Array(payload.prefix(5)))
        #expect(descriptor.encodedSize == 5)
    }

    @Test func theShortestDescriptorIsOneByte() throws {
        var reader = ByteReader([0x10, 0x9D])  // S=1 PID=0, no extensions
        #expect(try VP8PayloadDescriptor.parse(&reader) == VP8PayloadDescriptor(startsPartition: true))
    }

    @Test func everyStrictPrefixThrows() {
        let payload: [UInt8] = [0x90, 0xF0, 0x92, 0x34, 0x07, 0x65, 0x10]  // full descriptor + 1 payload byte
        var depayloader = VP8Depayloader()
        for length in 0..<payload.count {
            #expect(throws: WireError.self, "prefix of \(length) bytes") {
                try depayloader.push(Array(payload.prefix(length)), sequenceNumber: 1, timestamp: 1, marker: true)
            }
        }
        #expect(throws: WireError.truncated(what: "vp8: 15-bit picture ID", got: 0, need: 1)) {
            try depayloader.push([0x90, 0x80, 0x92], sequenceNumber: 1, timestamp: 1, marker: true)
        }
        #expect(throws: WireError.truncated(what: "vp8: payload after the descriptor", got: 0, need: 1)) {
            try depayloader.push([0x90, 0x80, 0x92, 0x34], sequenceNumber: 1, timestamp: 1, marker: true)
        }
    }
}

@Suite struct VP8FrameHeaderTests {
    @Test func readsAKeyFrameHeader() throws {
        let frame: [UInt8] = [
            0x50, 0x2A, 0x00,  // P=0 key frame, version 0, show_frame=1, first partition 0x2A<<3 | 0x50>>5 = 338
            0x9D, 0x01, 0x2A,  // start code
            0x40, 0x01,  // width 320 (little-endian), scale 0
            0xF0, 0x00
        ]  // height 240
        let header = try VP8FrameHeader(frame: frame)
        #expect(
            header
                == VP8FrameHeader(
                    isKeyframe: true, version: 0, showFrame: true, firstPartitionSize: 338,
                    width: 320, height: 240))
        #expect(throws: WireError.invalid(what: "vp8: key frame", reason: "start code is not 9d 01 2a")) {
            try VP8FrameHeader(frame: [0x50, 0x2A, 0x00, 0x9D, 0x01, 0x2B, 0x40, 0x01, 0xF0, 0x00])
        }
        for length in 0..<frame.count {
            #expect(throws: WireError.self, "prefix of \(length) bytes") {
                try VP8FrameHeader(frame: frame.prefix(length))
            }
        }
        let inter = try VP8FrameHeader(frame: [0x31, 0x01, 0x00])
        #expect(!inter.isKeyframe && inter.width == nil && inter.firstPartitionSize == 9)
    }
}

@Suite struct VP8PayloaderTests {
    @Test func cutsAFrameWithPictureIDAndStartBit() throws {
        var payloader = VP8Payloader(maxPayloadSize: 7, firstPictureID: 0x7FFF)
        let frame: [UInt8] = [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x40]
        let units = try payloader.payload(frame)
        #expect(
            units == [
                RTPPayloadUnit(
                    payload: [
                        0x90,  // X=1 S=1 PID=0
                        0x80,  // I=1
                        0xFF, 0xFF,  // M=1, picture ID 0x7FFF
                        0x10, 0x02, 0x00
                    ], marker: false),
                RTPPayloadUnit(
                    payload: [
                        0x80,  // X=1 S=0 PID=0
                        0x80, 0xFF, 0xFF,
                        0x9D, 0x01
                    ], marker: false),
                RTPPayloadUnit(
                    payload: [
                        0x80, 0x80, 0xFF, 0xFF,
                        0x2A, 0x40
                    ], marker: true)
            ])
        // The 15-bit picture ID wraps to 0.
        let next = try payloader.payload([0x31])
        #expect(next == [RTPPayloadUnit(payload: [0x90, 0x80, 0x80, 0x00, 0x31], marker: true)])
        #expect(payloader.nextPictureID == 1)
    }

    @Test func refusesEmptyFramesAndRoomlessPayloads() {
        var payloader = VP8Payloader()
        #expect(throws: WireError.self) { try payloader.payload([]) }
        var tiny = VP8Payloader(maxPayloadSize: 4)
        #expect(
            throws: WireError.invalid(
                what: "vp8: max payload size",
                reason: "4 bytes leave no room after the 4-byte descriptor")
        ) {
            try tiny.payload([0x10])
        }
    }
}

@Suite struct VP8DepayloaderTests {
    private func push(
        _ units: [RTPPayloadUnit], from sequence: UInt16, timestamp: UInt32,
        skipping: Set<Int> = [], into depayloader: inout VP8Depayloader
    ) throws -> [DepayloadEvent] {
        var events: [DepayloadEvent] = []
        for (offset, unit) in units.enumerated() where !skipping.contains(offset) {
            events += try depayloader.push(
                unit.payload, sequenceNumber: sequence &+ UInt16(offset),
                timestamp: timestamp, marker: unit.marker)
        }
        return events
    }

    @Test func roundTripsFramesAndTellsKeyframes() throws {
        var payloader = VP8Payloader(maxPayloadSize: 100, firstPictureID: 0x7FFE)
        var depayloader = VP8Depayloader()
        let key = [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A] + [UInt8](repeating: 7, count: 300)
        let inter = [0x31] + [UInt8](repeating: 9, count: 150)
        var events = try push(payloader.payload(key), from: 65534, timestamp: 0, into: &depayloader)
        events += try push(payloader.payload(inter), from: 2, timestamp: 3000, into: &depayloader)
        events += try push(payloader.payload(inter), from: 4, timestamp: 6000, into: &depayloader)
        let out = frames(events)
        #expect(out.map(\.bytes) == [key, inter, inter])
        #expect(out.map(\.isKeyframe) == [true, false, false])
        #expect(out.map(\.pictureID) == [0x7FFE, 0x7FFF, 0])
        #expect(out.map(\.firstSequenceNumber) == [65534, 2, 4])
    }

    @Test func aLostPacketDropsItsFrameAndTheNextWholeFrameComesThrough() throws {
        var payloader = VP8Payloader(maxPayloadSize: 100)
        var depayloader = VP8Depayloader()
        let key = [0x10] + [UInt8](repeating: 7, count: 300)  // four packets
        let inter = [0x31] + [UInt8](repeating: 9, count: 50)
        var events = try push(payloader.payload(key), from: 10, timestamp: 0, skipping: [1], into: &depayloader)
        #expect(
            events == [
                .gap(after: 10, missing: 1),
                .dropped(DroppedFrame(timestamp: 0, firstSequenceNumber: 10, reason: .missingPackets))
            ])
        // The frame's first packet is marked (S=1), so a frame after a loss is known whole.
        events = try push(payloader.payload(inter), from: 20, timestamp: 3000, into: &depayloader)
        #expect(events.first == .gap(after: 13, missing: 6))
        #expect(frames(events).map(\.bytes) == [inter])
    }

    @Test func aLostFirstPacketDropsTheFrame() throws {
        var payloader = VP8Payloader(maxPayloadSize: 100)
        var depayloader = VP8Depayloader()
        _ = try push(payloader.payload([0x31, 1]), from: 1, timestamp: 0, into: &depayloader)
        let events = try push(
            payloader.payload([0x31] + [UInt8](repeating: 2, count: 200)), from: 2, timestamp: 3000,
            skipping: [0], into: &depayloader)
        #expect(drops(events).map(\.reason) == [.missingPackets])
    }

    @Test func aFrameMustStartWithPartitionZero() throws {
        var depayloader = VP8Depayloader()
        _ = try depayloader.push([0x90, 0x80, 0x80, 0x01, 0x31], sequenceNumber: 1, timestamp: 0, marker: true)
        let events = try depayloader.push([0x80, 0x80, 0x80, 0x02, 0x31], sequenceNumber: 2, timestamp: 1, marker: true)
        #expect(
            drops(events).map(\.reason) == [
                .inconsistent("the frame's first packet does not start partition 0 (S=1, PID=0)")
            ])
    }

    @Test func aPictureIDChangeEndsAFrameWhoseMarkerWasNotSet() throws {
        var depayloader = VP8Depayloader()
        var events = try depayloader.push(
            [0x90, 0x80, 0x80, 0x01, 0x31], sequenceNumber: 1, timestamp: 0, marker: false)
        events += try depayloader.push([0x90, 0x80, 0x80, 0x02, 0x31], sequenceNumber: 2, timestamp: 0, marker: true)
        #expect(frames(events).map(\.pictureID) == [1, 2])
    }
}
