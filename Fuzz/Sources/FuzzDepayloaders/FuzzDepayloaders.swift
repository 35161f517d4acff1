import RTPWire

// Input: one byte choosing the codec (0 H.264, 1 VP8, 2 Opus, 3 H.264 payloader on raw Annex-B),
// then packets, each: a control byte (bit 0 marker; bits 1–2 sequence step: +1, repeat, +2 gap,
// −1 late; bit 3 new timestamp), a 2-byte big-endian length and that many payload bytes.
// Whatever comes out must be whole: frames re-payload and depayload to themselves.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    guard let selector = bytes.first else { return 0 }
    if selector % 4 == 3 {
        fuzzH264Payloader(Array(bytes.dropFirst()))
        return 0
    }
    var h264 = H264Depayloader(maximumFrameSize: 1 << 16)
    var vp8 = VP8Depayloader(maximumFrameSize: 1 << 16)
    var opus = OpusDepayloader()
    var sequenceNumber: UInt16 = 0xFFF0
    var timestamp: UInt32 = 0
    var index = 1
    while index + 3 <= bytes.count {
        let control = bytes[index]
        let length = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
        let end = min(bytes.count, index + 3 + length)
        let payload = Array(bytes[(index + 3)..<end])
        index = end
        switch (control >> 1) & 0x03 {
        case 0: sequenceNumber &+= 1
        case 1: break
        case 2: sequenceNumber &+= 2
        default: sequenceNumber &-= 1
        }
        if control & 0x08 != 0 { timestamp &+= 3000 }
        let marker = control & 0x01 != 0
        do {
            switch selector % 4 {
            case 0:
                let events = try h264.push(
                    payload, sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker)
                check(events, limit: 1 << 16, rebuild: rebuildH264)
            case 1:
                let events = try vp8.push(payload, sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker)
                check(events, limit: 1 << 16, rebuild: rebuildVP8)
            default:
                let events = try opus.push(
                    payload, sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker)
                for case let .frame(frame) in events { precondition(frame.bytes == payload, "opus packet changed") }
            }
        } catch {
            // Refused packets are fine; crashing on them is not.
            precondition(!"\(error)".isEmpty)
        }
    }
    check(h264.finish(), limit: 1 << 16, rebuild: rebuildH264)
    check(vp8.finish(), limit: 1 << 16, rebuild: rebuildVP8)
    return 0
}

private func check(_ events: [DepayloadEvent], limit: Int, rebuild: (DepayloadedFrame) -> Void) {
    for event in events {
        switch event {
        case let .gap(_, missing):
            precondition(missing > 0 && missing < 0x8000, "gap of \(missing)")
        case let .dropped(drop):
            precondition(!drop.description.isEmpty)
        case let .frame(frame):
            precondition(!frame.bytes.isEmpty, "empty frame")
            precondition(frame.bytes.count <= limit, "frame over the size limit")
            rebuild(frame)
        }
    }
}

/// A depayloaded access unit is clean Annex-B that survives payloading and depayloading again.
private func rebuildH264(_ frame: DepayloadedFrame) {
    guard let units = try? H264AnnexB.nalUnits(in: frame.bytes) else {
        preconditionFailure("depayloaded access unit is not Annex-B")
    }
    precondition(!units.isEmpty)
    for unit in units {
        let header = unit.first ?? 0x80
        precondition(header & 0x80 == 0 && H264NALUnitType(header: header).isCodecNALUnit, "bad NAL header out")
    }
    let hasIDR = units.contains { H264NALUnitType(header: $0.first ?? 0) == .idrSlice }
    precondition(hasIDR == frame.isKeyframe, "keyframe flag disagrees with the NAL units")
    roundTripH264(units, maxPayloadSize: 40)
}

private func roundTripH264(_ units: [ArraySlice<UInt8>], maxPayloadSize: Int) {
    var payloader = H264Payloader(maxPayloadSize: maxPayloadSize)
    guard let packets = try? payloader.payload(nalUnits: units) else {
        preconditionFailure("payloader refused NAL units the depayloader accepted")
    }
    let kept = units.filter {
        let type = H264NALUnitType(header: $0.first ?? 0)
        return type != .accessUnitDelimiter && type != .filler
    }
    guard !kept.isEmpty else { precondition(packets.isEmpty); return }
    var depayloader = H264Depayloader()
    var out: [DepayloadedFrame] = []
    // Open with an SPS so the first access unit is proven to start here.
    _ = try? depayloader.push([0x67, 0x42, 0xE0, 0x1F], sequenceNumber: 0, timestamp: 0, marker: true)
    for (offset, packet) in packets.enumerated() {
        precondition(packet.payload.count <= maxPayloadSize, "payload over the limit")
        precondition(packet.marker == (offset == packets.count - 1), "marker not on the last packet only")
        guard
            let events = try? depayloader.push(
                packet.payload, sequenceNumber: UInt16(truncatingIfNeeded: offset + 1),
                timestamp: 1, marker: packet.marker)
        else {
            preconditionFailure("depayloader refused the payloader's packet")
        }
        for case let .frame(frame) in events { out.append(frame) }
    }
    precondition(out.count == 1, "round trip gave \(out.count) frames")
    let again = (try? H264AnnexB.nalUnits(in: out[0].bytes)) ?? []
    precondition(again.map(Array.init) == kept.map(Array.init), "NAL units changed in the round trip")
}

/// Raw bytes as an Annex-B access unit: if the payloader takes them, they come back unchanged.
private func fuzzH264Payloader(_ bytes: [UInt8]) {
    guard let units = try? H264AnnexB.nalUnits(in: bytes) else { return }
    let headersValid = units.allSatisfy {
        ($0.first ?? 0x80) & 0x80 == 0 && H264NALUnitType(header: $0.first ?? 0).isCodecNALUnit
    }
    var payloader = H264Payloader(maxPayloadSize: 3 + (bytes.first.map { Int($0) } ?? 0))
    guard (try? payloader.payload(nalUnits: units)) != nil else { return }
    precondition(headersValid, "payloader took a NAL unit with a bad header")
    roundTripH264(units, maxPayloadSize: payloader.maxPayloadSize)
}

/// A depayloaded VP8 frame cuts and reassembles to the same bytes.
private func rebuildVP8(_ frame: DepayloadedFrame) {
    precondition(frame.isKeyframe == (frame.bytes[0] & 0x01 == 0), "keyframe flag disagrees with the P bit")
    var payloader = VP8Payloader(maxPayloadSize: 16)
    guard let packets = try? payloader.payload(frame.bytes) else { preconditionFailure("payloader refused a frame") }
    var depayloader = VP8Depayloader()
    var out: [DepayloadedFrame] = []
    for (offset, packet) in packets.enumerated() {
        guard
            let events = try? depayloader.push(
                packet.payload, sequenceNumber: UInt16(truncatingIfNeeded: offset),
                timestamp: 7, marker: packet.marker)
        else {
            preconditionFailure("depayloader refused the payloader's packet")
        }
        for case let .frame(rebuilt) in events { out.append(rebuilt) }
    }
    precondition(
        out.count == 1 && out[0].bytes == frame.bytes && out[0].isKeyframe == frame.isKeyframe,
        "VP8 round trip changed the frame")
}
