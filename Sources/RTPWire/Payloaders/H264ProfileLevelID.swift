import ShareCore

/// The three bytes after an SPS's NAL header — profile_idc, the constraint_set flags and level_idc —
/// which SDP carries as `profile-level-id` (RFC 6184 §8.1), e.g. `42e01f` for constrained baseline 3.1.
public struct H264ProfileLevelID: Hashable, Sendable, CustomStringConvertible {
    public var profileIDC: UInt8
    /// constraint_set0_flag in the top bit down to constraint_set5_flag, then two reserved zero bits.
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

    /// Parses the six hex digits of SDP's `profile-level-id`.
    public init?(hex: some StringProtocol) {
        guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
        self.init(profileIDC: UInt8(truncatingIfNeeded: value >> 16), constraintFlags: UInt8(truncatingIfNeeded: value >> 8),
                  levelIDC: UInt8(truncatingIfNeeded: value))
    }

    /// Baseline profile (66) with constraint_set1_flag: what every WebRTC peer decodes.
    public var isConstrainedBaseline: Bool { profileIDC == 66 && constraintFlags & 0x40 != 0 }

    /// Six lower-case hex digits, as SDP writes them.
    public var hex: String {
        [profileIDC, constraintFlags, levelIDC].map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    public var description: String { hex }
}
