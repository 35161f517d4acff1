import ShareCore

/// The type field of an H.264 NAL unit header (ITU-T H.264 Table 7-1; types 24–29 are RFC 6184's
/// packet types).
///
///     +---------------+
///     |0|1|2|3|4|5|6|7|
///     +-+-+-+-+-+-+-+-+
///     |F|NRI|  Type   |
///     +---------------+
public struct H264NALUnitType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x1F }
    /// The type of the NAL unit whose header byte is `header`.
    public init(header: UInt8) { self.init(rawValue: header) }

    public static let nonIDRSlice = H264NALUnitType(rawValue: 1)
    public static let idrSlice = H264NALUnitType(rawValue: 5)
    public static let sei = H264NALUnitType(rawValue: 6)
    public static let sequenceParameterSet = H264NALUnitType(rawValue: 7)
    public static let pictureParameterSet = H264NALUnitType(rawValue: 8)
    public static let accessUnitDelimiter = H264NALUnitType(rawValue: 9)
    public static let endOfSequence = H264NALUnitType(rawValue: 10)
    public static let endOfStream = H264NALUnitType(rawValue: 11)
    public static let filler = H264NALUnitType(rawValue: 12)
    /// RFC 6184 §5.7.1 single-time aggregation packet.
    public static let stapA = H264NALUnitType(rawValue: 24)
    public static let stapB = H264NALUnitType(rawValue: 25)
    public static let mtap16 = H264NALUnitType(rawValue: 26)
    public static let mtap24 = H264NALUnitType(rawValue: 27)
    /// RFC 6184 §5.8 fragmentation unit without decoding order number.
    public static let fuA = H264NALUnitType(rawValue: 28)
    public static let fuB = H264NALUnitType(rawValue: 29)

    /// A type H.264 itself defines (1–23), as opposed to undefined 0 and RFC 6184's packet types.
    public var isCodecNALUnit: Bool { (1...23).contains(rawValue) }

    public var description: String {
        switch self {
        case .nonIDRSlice: return "slice"
        case .idrSlice: return "IDR slice"
        case .sei: return "SEI"
        case .sequenceParameterSet: return "SPS"
        case .pictureParameterSet: return "PPS"
        case .accessUnitDelimiter: return "AUD"
        case .filler: return "filler"
        case .stapA: return "STAP-A"
        case .stapB: return "STAP-B"
        case .mtap16: return "MTAP16"
        case .mtap24: return "MTAP24"
        case .fuA: return "FU-A"
        case .fuB: return "FU-B"
        default: return "NAL type \(rawValue)"
        }
    }
}

extension H264NALUnitType {
    /// `unit` without the zero bytes it ends with (never its header byte). A NAL unit cannot end
    /// in zero (its last byte holds the RBSP stop bit), but encoders may append trailing_zero_8bits
    /// (H.264 §B.1.1) and some send them over RTP: Chromium's OpenH264 screen-content SPS does.
    /// They belong to no NAL unit, so they are dropped rather than refused.
    static func droppingTrailingZeros(_ unit: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var end = unit.endIndex
        while end > unit.startIndex + 1, unit[end - 1] == 0 { end -= 1 }
        return unit[unit.startIndex..<end]
    }

    /// Why `unit` (header byte first) cannot be a NAL unit in an Annex-B stream, or nil if it can:
    /// H.264 §7.4.1 keeps 00 00 00, 00 00 01 and 00 00 02 out of NAL units (emulation prevention
    /// inserts 03) and forbids a final zero byte, so no start code can hide inside one.
    static func annexBProblem(in unit: some Collection<UInt8>) -> String? {
        if let found = unit.withContiguousStorageIfAvailable({ annexBProblem(inBuffer: $0) }) { return found }
        return Array(unit).withUnsafeBufferPointer { annexBProblem(inBuffer: $0) }
    }

    private static func annexBProblem(inBuffer bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // Only runs of zeros matter: jump from one zero byte to the next.
        var index = ZeroScan.next(in: bytes, from: 0)
        while index < bytes.count {
            var end = index
            while end < bytes.count && bytes[end] == 0 { end += 1 }
            if end - index >= 3 { return "contains 00 00 00 (missing emulation prevention)" }
            if end - index == 2, end < bytes.count, bytes[end] <= 2 {
                return "contains 00 00 0\(bytes[end]) (missing emulation prevention)"
            }
            index = ZeroScan.next(in: bytes, from: end)
        }
        return bytes.last == 0 ? "ends with a zero byte" : nil
    }
}

/// Finds zero bytes eight at a time (a word has a zero byte when `(v − 0x01…01) & ~v & 0x80…80`
/// is not zero), so scanning a large slice for start codes costs little more than reading it.
enum ZeroScan {
    static func next(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        guard let base = bytes.baseAddress else { return count }
        let raw = UnsafeRawPointer(base)
        while index + 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { break }
            index += 8
        }
        while index < count && bytes[index] != 0 { index += 1 }
        return index
    }
}

/// Annex-B byte streams (ITU-T H.264 Annex B): NAL units each preceded by a 3- or 4-byte start code.
public enum H264AnnexB {
    /// The NAL units of an Annex-B access unit, without start codes or trailing zero bytes.
    /// Empty NAL units are skipped. Throws when bytes other than zeros come before the first start code.
    public static func nalUnits(in accessUnit: [UInt8]) throws(WireError) -> [ArraySlice<UInt8>] {
        // Indices of the first byte after each 00 00 01. Emulation prevention keeps that sequence
        // out of NAL unit contents, so every occurrence is a start code.
        let starts: [Int] = accessUnit.withUnsafeBufferPointer { bytes in
            var starts: [Int] = []
            var index = ZeroScan.next(in: bytes, from: 0)
            while index < bytes.count {
                var end = index
                while end < bytes.count && bytes[end] == 0 { end += 1 }
                if end - index >= 2, end < bytes.count, bytes[end] == 1 { starts.append(end + 1) }
                index = ZeroScan.next(in: bytes, from: end)
            }
            return starts
        }
        guard let first = starts.first else {
            if accessUnit.allSatisfy({ $0 == 0 }) { return [] }
            throw .invalid(what: "h264: access unit", reason: "no Annex-B start code (00 00 01) found")
        }
        if accessUnit[0..<(first - 3)].contains(where: { $0 != 0 }) {
            throw .invalid(what: "h264: access unit", reason: "bytes before the first start code")
        }
        var units: [ArraySlice<UInt8>] = []
        units.reserveCapacity(starts.count)
        for (position, start) in starts.enumerated() {
            var end = position + 1 < starts.count ? starts[position + 1] - 3 : accessUnit.count
            // A NAL unit never ends in a zero byte: zeros here belong to a 4-byte start code or
            // are trailing_zero_8bits.
            while end > start && accessUnit[end - 1] == 0 { end -= 1 }
            if end > start { units.append(accessUnit[start..<end]) }
        }
        return units
    }

    /// An Annex-B access unit: each NAL unit behind a 4-byte start code.
    public static func accessUnit<C: Collection<UInt8>>(_ nalUnits: some Sequence<C>) -> [UInt8] {
        var bytes: [UInt8] = []
        for unit in nalUnits {
            bytes.append(contentsOf: [0, 0, 0, 1])
            bytes.append(contentsOf: unit)
        }
        return bytes
    }
}
