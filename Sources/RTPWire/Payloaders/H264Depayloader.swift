// RFC 6184 RTP Payload Format for H.264 Video, receiving packetization-mode=1 (non-interleaved):
// single NAL unit packets (types 1–23), STAP-A (24) and FU-A (28). STAP-B, MTAP16/24 and FU-B
// belong to the interleaved mode and are refused. See H264Payloader.swift for the bit diagrams.

import ShareCore

/// One packet's worth of an H.264 access unit.
enum H264PacketContent: Hashable, Sendable {
    /// Whole NAL units: a single NAL unit packet, or the units of a STAP-A.
    case nalUnits([ArraySlice<UInt8>])
    /// One FU-A fragment of a NAL unit whose header is `nalHeader`.
    case fragment(nalHeader: UInt8, isStart: Bool, isEnd: Bool, data: ArraySlice<UInt8>)

    /// Parses one RTP payload on its own, refusing what packetization-mode 1 does not allow.
    static func parse(_ payload: [UInt8]) throws(WireError) -> H264PacketContent {
        var reader = ByteReader(payload)
        let header = try reader.readUInt8("h264: RTP payload")
        try checkHeader(header, what: "h264: NAL unit header")
        let type = H264NALUnitType(header: header)
        switch type {
        case .stapA:
            guard reader.remaining >= 3 else {
                throw .truncated(what: "h264: STAP-A", got: payload.count, need: 4)
            }
            var units: [ArraySlice<UInt8>] = []
            while !reader.isAtEnd {
                let size = Int(try reader.readUInt16("h264: STAP-A NAL unit size"))
                guard size > 0 else {
                    throw .invalid(what: "h264: STAP-A", reason: "NAL unit \(units.count + 1) has size 0")
                }
                let unit = H264NALUnitType.droppingTrailingZeros(try reader.readBytes(size, "h264: STAP-A NAL unit"))
                try checkHeader(unit[unit.startIndex], what: "h264: STAP-A NAL unit header")
                guard H264NALUnitType(header: unit[unit.startIndex]).isCodecNALUnit else {
                    throw .invalid(
                        what: "h264: STAP-A",
                        reason: "contains a \(H264NALUnitType(header: unit[unit.startIndex])) packet")
                }
                if let problem = H264NALUnitType.annexBProblem(in: unit) {
                    throw .invalid(what: "h264: STAP-A NAL unit \(units.count + 1)", reason: problem)
                }
                units.append(unit)
            }
            return .nalUnits(units)
        case .fuA:
            guard payload.count >= 3 else {
                throw .truncated(what: "h264: FU-A", got: payload.count, need: 3)
            }
            let fuHeader = try reader.readUInt8("h264: FU-A header")
            let isStart = fuHeader & 0x80 != 0, isEnd = fuHeader & 0x40 != 0
            if isStart && isEnd {
                throw .invalid(
                    what: "h264: FU-A",
                    reason: "start and end bits both set (a NAL unit that fits one packet is not fragmented)")
            }
            let fragmentType = H264NALUnitType(header: fuHeader)
            guard fragmentType.isCodecNALUnit else {
                throw .invalid(what: "h264: FU-A", reason: "fragmented \(fragmentType) is not a NAL unit")
            }
            return .fragment(
                nalHeader: header & 0xE0 | fragmentType.rawValue, isStart: isStart, isEnd: isEnd,
                data: reader.readRemaining())
        case .stapB, .mtap16, .mtap24, .fuB:
            throw .unsupported(what: "h264: \(type) packet", reason: "interleaved mode (packetization-mode 2)")
        default:
            guard type.isCodecNALUnit else {
                throw .invalid(what: "h264: NAL unit header", reason: "\(type) is reserved")
            }
            let unit = H264NALUnitType.droppingTrailingZeros(payload[...])
            if let problem = H264NALUnitType.annexBProblem(in: unit) {
                throw .invalid(what: "h264: NAL unit", reason: problem)
            }
            return .nalUnits([unit])
        }
    }

    private static func checkHeader(_ header: UInt8, what: String) throws(WireError) {
        if header & 0x80 != 0 { throw .invalid(what: what, reason: "forbidden_zero_bit is set") }
        if header & 0x1F == 0 { throw .invalid(what: what, reason: "NAL unit type 0 is undefined") }
    }

    /// The packet begins an access unit for certain: a delimiter or an SPS can only come first.
    var beginsAccessUnit: Bool {
        let header: UInt8?
        switch self {
        case let .nalUnits(units): header = units.first?.first
        case let .fragment(nalHeader, isStart, _, _): header = isStart ? nalHeader : nil
        }
        guard let header else { return false }
        let type = H264NALUnitType(header: header)
        return type == .accessUnitDelimiter || type == .sequenceParameterSet
    }
}

/// An access unit being put back together from its packets.
struct H264AccessUnitBuilder: FrameBuilder {
    private var bytes: [UInt8] = []
    private var openFragment: [UInt8]?
    private var hasIDR = false
    private var nalUnitCount = 0

    var byteCount: Int { bytes.count + (openFragment?.count ?? 0) }

    mutating func add(_ piece: H264PacketContent, isFirstPacket: Bool) -> String? {
        switch piece {
        case let .nalUnits(units):
            if openFragment != nil { return "a whole NAL unit arrived inside an FU-A fragmented one" }
            for unit in units { append(unit) }
        case let .fragment(nalHeader, isStart, isEnd, data):
            if isStart {
                if openFragment != nil { return "an FU-A start arrived before the previous fragmented NAL unit ended" }
                openFragment = [nalHeader] + data
            } else {
                guard var fragment = openFragment else { return "an FU-A continuation arrived without its start" }
                openFragment = nil
                guard fragment.first == nalHeader else { return "FU-A fragments of different NAL units" }
                fragment.append(contentsOf: data)
                openFragment = fragment
            }
            if isEnd, let whole = openFragment {
                openFragment = nil
                let fragment = H264NALUnitType.droppingTrailingZeros(whole[...])
                if let problem = H264NALUnitType.annexBProblem(in: fragment) {
                    return "the FU-A reassembled NAL unit \(problem)"
                }
                append(fragment)
            }
        }
        return nil
    }

    private mutating func append(_ unit: ArraySlice<UInt8>) {
        bytes.append(contentsOf: [0, 0, 0, 1])
        bytes.append(contentsOf: unit)
        nalUnitCount += 1
        if let header = unit.first, H264NALUnitType(header: header) == .idrSlice { hasIDR = true }
    }

    var incompleteReason: String? {
        if openFragment != nil { return "the access unit ended inside an FU-A fragmented NAL unit" }
        return nalUnitCount == 0 ? "the access unit holds no NAL units" : nil
    }

    func build() -> (bytes: [UInt8], isKeyframe: Bool) { (bytes, hasIDR) }
}

/// Puts H.264 access units back together from RTP payloads (RFC 6184, packetization-mode=1).
///
/// Feed packets in sequence-number order (the jitter buffer's job); late and duplicate packets
/// (up to 1000 behind) are ignored, and a packet further behind is taken as the sender numbering
/// afresh. Each access unit comes out as Annex-B with 4-byte start codes, a keyframe when it holds
/// an IDR slice. A frame with a lost packet is reported dropped, never handed on. After a loss the
/// next access unit is kept only if it opens with an AUD or SPS, since otherwise its beginning may
/// be what was lost. A packet that is malformed on its own throws and is treated as lost.
public struct H264Depayloader: Sendable {
    private var assembler: FrameAssembler<H264AccessUnitBuilder>

    /// - Parameter maximumFrameSize: access units larger than this are dropped.
    public init(maximumFrameSize: Int = 8 << 20) {
        assembler = FrameAssembler(maximumFrameSize: maximumFrameSize)
    }

    /// Takes one RTP packet's payload and header fields; returns what that settled.
    public mutating func push(
        _ payload: [UInt8], sequenceNumber: UInt16, timestamp: UInt32,
        marker: Bool
    ) throws(WireError) -> [DepayloadEvent] {
        guard !assembler.isLateOrDuplicate(sequenceNumber) else { return [] }
        let content = try H264PacketContent.parse(payload)
        return assembler.push(
            content, sequenceNumber: sequenceNumber, timestamp: timestamp, pictureID: nil,
            marker: marker, startsFrame: content.beginsAccessUnit)
    }

    /// Settles an access unit still open when the stream ends (reported dropped: its marker never came).
    public mutating func finish() -> [DepayloadEvent] { assembler.finish() }
}
