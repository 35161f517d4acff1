// RFC 6184 RTP Payload Format for H.264 Video, packetization-mode=1 (non-interleaved):
// single NAL unit packets (§5.6), STAP-A aggregation (§5.7.1) and FU-A fragmentation (§5.8).
//
// STAP-A: the NAL header's F bit is the OR and NRI the largest of the aggregated units'.
//     0                   1                   2                   3
//     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |F|NRI| Type=24 |         NALU 1 Size           | NALU 1 HDR    |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                         NALU 1 Data ...  | NALU 2 Size  ...   |
//
// FU-A: the indicator keeps the NAL's F and NRI, the header its type; S on the first fragment,
// E on the last, never both.
//    +---------------+---------------+
//    |F|NRI| Type=28 |S|E|R|  Type   |  FU payload ...
//    +---------------+---------------+

import ShareCore

/// Packs H.264 access units into RTP payloads (RFC 6184, packetization-mode=1).
///
/// Access unit delimiters and filler data are left out. An IDR access unit that comes without its
/// SPS or PPS gets the last ones this payloader saw put in front of it, so a receiver that joins at
/// any keyframe can decode it. Small NAL units travel together in STAP-A packets; a NAL unit larger
/// than `maxPayloadSize` is cut into FU-A fragments of nearly equal size.
public struct H264Payloader: Hashable, Sendable {
    /// The largest RTP payload to produce, in bytes (at least 3, the smallest FU-A).
    public var maxPayloadSize: Int
    /// The last sequence parameter set seen, NAL header included.
    public private(set) var sequenceParameterSet: [UInt8]?
    /// The last picture parameter set seen, NAL header included.
    public private(set) var pictureParameterSet: [UInt8]?

    public init(maxPayloadSize: Int = 1200) {
        self.maxPayloadSize = maxPayloadSize
    }

    /// The RTP payloads for one Annex-B access unit; the last has the marker bit. An access unit
    /// with nothing to send (only delimiters or filler) gives no payloads.
    public mutating func payload(_ accessUnit: [UInt8]) throws(WireError) -> [RTPPayloadUnit] {
        try payload(nalUnits: H264AnnexB.nalUnits(in: accessUnit))
    }

    /// The RTP payloads for one access unit given as NAL units (header byte first, no start codes).
    public mutating func payload(nalUnits: [ArraySlice<UInt8>]) throws(WireError) -> [RTPPayloadUnit] {
        guard maxPayloadSize >= 3 else {
            throw .invalid(
                what: "h264: max payload size",
                reason: "\(maxPayloadSize) bytes cannot carry an FU-A fragment (need at least 3)")
        }
        var units: [ArraySlice<UInt8>] = []
        var hasSPS = false, hasPPS = false, hasIDR = false
        for unit in nalUnits {
            guard let header = unit.first else { continue }
            if header & 0x80 != 0 {
                throw .invalid(what: "h264: NAL unit header", reason: "forbidden_zero_bit is set")
            }
            let type = H264NALUnitType(header: header)
            guard type.isCodecNALUnit else {
                throw .invalid(what: "h264: NAL unit header", reason: "\(type) is not a NAL unit an encoder produces")
            }
            if let problem = H264NALUnitType.annexBProblem(in: unit) {
                throw .invalid(what: "h264: \(type) NAL unit", reason: problem)
            }
            switch type {
            case .accessUnitDelimiter, .filler:
                continue
            case .sequenceParameterSet:
                hasSPS = true
                sequenceParameterSet = Array(unit)
            case .pictureParameterSet:
                hasPPS = true
                pictureParameterSet = Array(unit)
            case .idrSlice:
                hasIDR = true
            default:
                break
            }
            units.append(unit)
        }
        if hasIDR {
            // Parameter sets before every IDR: a missing SPS goes first, a missing PPS after the SPS.
            if !hasSPS, let sps = sequenceParameterSet { units.insert(sps[...], at: 0) }
            if !hasPPS, let pps = pictureParameterSet {
                let afterSPS = units.lastIndex { H264NALUnitType(header: $0.first ?? 0) == .sequenceParameterSet }
                units.insert(pps[...], at: afterSPS.map { $0 + 1 } ?? 0)
            }
        }

        var payloads: [RTPPayloadUnit] = []
        var index = 0
        while index < units.count {
            let unit = units[index]
            if unit.count > maxPayloadSize {
                payloads += fragment(unit)
                index += 1
                continue
            }
            // Gather as many following units as fit one STAP-A with this one.
            var size = 1 + 2 + unit.count
            var end = index + 1
            while end < units.count, size + 2 + units[end].count <= maxPayloadSize,
                units[end].count <= Int(UInt16.max), unit.count <= Int(UInt16.max)
            {
                size += 2 + units[end].count
                end += 1
            }
            if end - index >= 2 {
                payloads.append(RTPPayloadUnit(payload: aggregate(units[index..<end], size: size), marker: false))
            } else {
                payloads.append(RTPPayloadUnit(payload: Array(unit), marker: false))
            }
            index = end
        }
        if !payloads.isEmpty { payloads[payloads.count - 1].marker = true }
        return payloads
    }

    private func aggregate(_ units: ArraySlice<ArraySlice<UInt8>>, size: Int) -> [UInt8] {
        var forbidden: UInt8 = 0
        var nri: UInt8 = 0
        for unit in units {
            let header = unit.first ?? 0
            forbidden |= header & 0x80
            nri = max(nri, header & 0x60)
        }
        var writer = ByteWriter(capacity: size)
        writer.write(forbidden | nri | H264NALUnitType.stapA.rawValue)
        for unit in units {
            writer.write(UInt16(truncatingIfNeeded: unit.count))
            writer.write(contentsOf: unit)
        }
        return writer.bytes
    }

    private func fragment(_ unit: ArraySlice<UInt8>) -> [RTPPayloadUnit] {
        let header = unit.first ?? 0
        let indicator = header & 0xE0 | H264NALUnitType.fuA.rawValue
        let type = header & 0x1F
        let body = unit.dropFirst()
        let chunks = balancedChunks(count: body.count, maxChunk: maxPayloadSize - 2)
        return chunks.enumerated().map { position, range in
            var fuHeader = type
            if position == 0 { fuHeader |= 0x80 }
            if position == chunks.count - 1 { fuHeader |= 0x40 }
            var payload: [UInt8] = [indicator, fuHeader]
            payload.reserveCapacity(2 + range.count)
            payload.append(
                contentsOf: body[(body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound)])
            return RTPPayloadUnit(payload: payload, marker: false)
        }
    }
}
