/// An SRTP protection profile DTLS-SRTP can negotiate (RFC 5764 §4.1.2, RFC 7714 §14.2).
public enum SRTPProfile: String, Sendable, CaseIterable, CustomStringConvertible {
    /// AEAD_AES_128_GCM, 16-byte tag (RFC 7714): preferred by browsers when offered.
    case aeadAES128GCM = "SRTP_AEAD_AES_128_GCM"
    /// AES_CM_128_HMAC_SHA1_80 (RFC 3711): the profile every WebRTC endpoint has.
    case aes128CMHMACSHA1_80 = "SRTP_AES128_CM_SHA1_80"

    /// Our offer, best first.
    public static let defaultPreference: [SRTPProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80]

    /// The profile's name as OpenSSL's `use_srtp` list spells it.
    public var openSSLName: String { rawValue }

    /// The profile's code point in the `use_srtp` extension.
    public var protectionProfileID: UInt16 {
        switch self {
        case .aeadAES128GCM: 0x0007
        case .aes128CMHMACSHA1_80: 0x0001
        }
    }

    /// Master key length in bytes (RFC 5764 §4.1.2, RFC 7714 §12).
    public var masterKeyLength: Int { 16 }

    /// Master salt length in bytes: 14 for AES-CM, 12 for AES-GCM.
    public var masterSaltLength: Int {
        switch self {
        case .aeadAES128GCM: 12
        case .aes128CMHMACSHA1_80: 14
        }
    }

    init?(protectionProfileID id: UInt) {
        guard let profile = Self.allCases.first(where: { UInt($0.protectionProfileID) == id }) else { return nil }
        self = profile
    }

    public var description: String { rawValue }
}
