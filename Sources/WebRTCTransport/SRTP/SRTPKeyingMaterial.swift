/// The SRTP master keys and salts a DTLS-SRTP handshake yields (RFC 5764 §4.2): the exporter
/// output with label "EXTRACTOR-dtls_srtp" is
/// `client_write_SRTP_master_key | server_write_SRTP_master_key |
///  client_write_SRTP_master_salt | server_write_SRTP_master_salt`.
///
/// Secret: `description` names the profile only.
public struct SRTPKeyingMaterial: Hashable, Sendable, CustomStringConvertible {
    /// The exporter label of RFC 5764 §4.2.
    public static let exporterLabel = "EXTRACTOR-dtls_srtp"

    public let profile: SRTPProfile
    public let clientWriteKey: [UInt8]
    public let clientWriteSalt: [UInt8]
    public let serverWriteKey: [UInt8]
    public let serverWriteSalt: [UInt8]

    /// How many exporter bytes `profile` needs: 2 × (key + salt).
    public static func exportLength(for profile: SRTPProfile) -> Int {
        2 * (profile.masterKeyLength + profile.masterSaltLength)
    }

    /// Splits the exporter output (exactly `exportLength(for: profile)` bytes).
    public init(profile: SRTPProfile, exported: [UInt8]) throws(SRTPError) {
        let keyLength = profile.masterKeyLength
        let saltLength = profile.masterSaltLength
        guard exported.count == Self.exportLength(for: profile) else {
            throw .invalidKeys(
                "\(profile) needs \(Self.exportLength(for: profile)) bytes of keying material, got \(exported.count)")
        }
        var offset = 0
        func take(_ count: Int) -> [UInt8] {
            defer { offset += count }
            return Array(exported[offset..<offset + count])
        }
        self.profile = profile
        clientWriteKey = take(keyLength)
        serverWriteKey = take(keyLength)
        clientWriteSalt = take(saltLength)
        serverWriteSalt = take(saltLength)
    }

    /// Key followed by salt, as libsrtp takes a master key, for the side that writes with it.
    func masterKeyAndSalt(writtenBy writer: DTLSRole) -> [UInt8] {
        switch writer {
        case .client: clientWriteKey + clientWriteSalt
        case .server: serverWriteKey + serverWriteSalt
        }
    }

    public var description: String { "SRTP keying material (\(profile), secret)" }
}
