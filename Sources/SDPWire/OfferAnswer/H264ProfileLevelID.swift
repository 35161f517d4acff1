/// An H.264 profile as the `profile-level-id` fmtp parameter names it (RFC 6184 §8.1), read from
/// profile_idc and the constraint_set flags of profile-iop (H.264 Annex A.2).
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

/// The three bytes of `profile-level-id`, e.g. `42e01f`: profile_idc 0x42 (Baseline),
/// profile-iop 0xe0 (constraint_set0, 1 and 2), level_idc 0x1f (3.1).
public struct H264ProfileLevelID: Hashable, Sendable {
    public var profileIDC: UInt8
    /// constraint_set0_flag is the top bit (0x80), set1 0x40, … set5 0x04.
    public var profileIOP: UInt8
    public var levelIDC: UInt8

    public init(profileIDC: UInt8, profileIOP: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.profileIOP = profileIOP
        self.levelIDC = levelIDC
    }

    /// Reads exactly six hex digits; nil otherwise.
    public init?(_ hex: String) {
        let scalars = Array(hex.unicodeScalars)
        guard scalars.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 6, by: 2) {
            guard let byte = hexByte(scalars[index..<index + 2]) else {
                return nil
            }
            bytes.append(byte)
        }
        self.init(profileIDC: bytes[0], profileIOP: bytes[1], levelIDC: bytes[2])
    }

    /// What an absent `profile-level-id` means (RFC 6184 §8.1): Baseline, level 1.0.
    public static let absent = H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0x00, levelIDC: 0x0A)
    /// `42e01f`: Constrained Baseline, level 3.1 — what sharectl sends.
    public static let constrainedBaseline31 = H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0xE0, levelIDC: 0x1F)
    /// `4d001f`: Main, level 3.1.
    public static let main31 = H264ProfileLevelID(profileIDC: 0x4D, profileIOP: 0x00, levelIDC: 0x1F)

    private func flag(_ set: Int) -> Bool { profileIOP & (0x80 >> UInt8(set)) != 0 }

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

    /// Six lower-case hex digits, as Chromium writes them.
    public var hexString: String {
        [profileIDC, profileIOP, levelIDC].map { byte in
            let digits = Array("0123456789abcdef".unicodeScalars)
            return String(String.UnicodeScalarView([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]))
        }.joined()
    }
}
