import ShareCore

/// An H.264 profile as `profile-level-id` names it (RFC 6184 §8.1), read from profile_idc and the
/// constraint_set flags (H.264 Annex A.2).
public enum H264Profile: Hashable, Sendable {
    /// Baseline without ASO/FMO/redundant slices: what every WebRTC endpoint decodes.
    case constrainedBaseline
    case baseline
    case main
    case extended
    /// High without B-frames (constraint_set4 and set5).
    case constrainedHigh
    case high
    /// Any other profile_idc (High 10, 4:2:2, 4:4:4 Predictive `f4` …).
    case other(profileIDC: UInt8)
}

/// The three bytes after an SPS's NAL header — profile_idc, the constraint_set flags and level_idc —
/// which SDP carries as `profile-level-id` (RFC 6184 §8.1), e.g. `42e01f`: profile_idc 0x42
/// (Baseline), constraint flags 0xe0 (constraint_set0, 1 and 2), level_idc 0x1f (3.1). One type for
/// both ends: the payloader reads it from an SPS, offer/answer from an fmtp line.
public struct H264ProfileLevelID: Hashable, Sendable, CustomStringConvertible {
    public var profileIDC: UInt8
    /// constraint_set0_flag in the top bit (0x80) down to constraint_set5_flag (0x04), then two
    /// reserved zero bits (SDP calls this byte profile-iop).
    public var constraintFlags: UInt8
    public var levelIDC: UInt8

    public init(profileIDC: UInt8, constraintFlags: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.constraintFlags = constraintFlags
        self.levelIDC = levelIDC
    }

    /// Reads it from an SPS NAL unit (header byte included, no start code).
    public init(sps: some Collection<UInt8>) throws(WireError) {
        var reader = ByteReader(sps)
        let header = try reader.readUInt8("h264: SPS NAL header")
        guard H264NALUnitType(header: header) == .sequenceParameterSet else {
            throw .invalid(what: "h264: SPS", reason: "NAL unit type \(header & 0x1F) is not an SPS (7)")
        }
        let profile = try reader.readUInt8("h264: SPS profile_idc")
        let constraints = try reader.readUInt8("h264: SPS constraint flags")
        // Emulation prevention would put a 0x03 here only after 00 00: a zero profile_idc is invalid anyway.
        let level = try reader.readUInt8("h264: SPS level_idc")
        guard profile != 0, level != 0 else {
            throw .invalid(what: "h264: SPS", reason: "profile_idc and level_idc must not be zero")
        }
        self.init(profileIDC: profile, constraintFlags: constraints, levelIDC: level)
    }

    /// Reads exactly six hex digits (either case), as SDP's `profile-level-id`; nil otherwise.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 6, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.init(profileIDC: bytes[0], constraintFlags: bytes[1], levelIDC: bytes[2])
    }

    /// What an absent `profile-level-id` means (RFC 6184 §8.1): Baseline, level 1.0.
    public static let absent = H264ProfileLevelID(profileIDC: 0x42, constraintFlags: 0x00, levelIDC: 0x0A)
    /// `42e01f`: Constrained Baseline, level 3.1 — what sharectl sends.
    public static let constrainedBaseline31 = H264ProfileLevelID(
        profileIDC: 0x42, constraintFlags: 0xE0, levelIDC: 0x1F)
    /// `4d001f`: Main, level 3.1.
    public static let main31 = H264ProfileLevelID(profileIDC: 0x4D, constraintFlags: 0x00, levelIDC: 0x1F)

    private func flag(_ set: Int) -> Bool { constraintFlags & (0x80 >> UInt8(set)) != 0 }

    /// The profile these bytes name. Constrained Baseline is Baseline with constraint_set1
    /// (`42e0`, `42c0`, `4240`), Main with constraint_set0 (`4d80`…), or Extended with set0 and set1.
    public var profile: H264Profile {
        switch profileIDC {
        case 0x42: return flag(1) ? .constrainedBaseline : .baseline
        case 0x4D: return flag(0) ? .constrainedBaseline : .main
        case 0x58:
            if flag(0) && flag(1) { return .constrainedBaseline }
            return flag(0) ? .baseline : .extended
        case 0x64: return flag(4) && flag(5) ? .constrainedHigh : .high
        default: return .other(profileIDC: profileIDC)
        }
    }

    /// Baseline profile (66) with constraint_set1_flag: what every WebRTC peer decodes.
    public var isConstrainedBaseline: Bool { profileIDC == 66 && flag(1) }

    /// Six lower-case hex digits, as SDP writes them (and Chromium does).
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(
            decoding: [profileIDC, constraintFlags, levelIDC].flatMap {
                [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]
            },
            as: UTF8.self)
    }

    public var description: String { hex }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
