internal import COpenSSL

/// The local end's DTLS identity: a fresh ECDSA P-256 key and a self-signed X.509 certificate
/// (random serial, CN "sharectl", valid from 30 days ago to 30 days ahead), and its SHA-256
/// fingerprint for `a=fingerprint`.
///
/// Immutable after `init`, so one certificate may serve every connection on any thread: OpenSSL
/// only reads the key and certificate (contexts take their own references).
public final class DTLSCertificate: @unchecked Sendable {
    /// `EVP_PKEY *`, freed in deinit.
    let privateKey: OpaquePointer
    /// `X509 *`, freed in deinit.
    let certificate: OpaquePointer
    /// `sha-256 AB:CD:…`, for the SDP.
    public let fingerprint: DTLSFingerprint

    /// How far either side of now the certificate is valid.
    public static let validity: Duration = .seconds(30 * 24 * 3600)
    public static let commonName = "sharectl"

    /// Makes a new key pair and certificate (a few milliseconds).
    public init() throws(DTLSError) {
        OpenSSLLibrary.start()
        OpenSSLErrorQueue.clear()
        let key = try Self.makeKey()
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "X509_new failed"))
        }
        do {
            try Self.fill(certificate, key: key)
            self.fingerprint = try DTLSFingerprint.of(certificate: certificate, algorithm: .sha256)
        } catch {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
        self.privateKey = key
        self.certificate = certificate
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(privateKey)
    }

    /// The certificate's serial number, as uppercase hex (for logs and tests).
    public var serialHex: String {
        guard let bignum = ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate), nil) else { return "" }
        defer { BN_free(bignum) }
        guard let hex = BN_bn2hex(bignum) else { return "" }
        defer { CRYPTO_free(hex, #fileID, #line) }
        return String(cString: hex)
    }

    /// The subject's common name.
    public var subjectCommonName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(
            X509_get_subject_name(certificate), NID_commonName, &buffer, Int32(buffer.count))
        guard length >= 0 else { return "" }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Seconds from now to the notBefore and notAfter times (negative: in the past).
    public var validityFromNow: (notBefore: Int, notAfter: Int) {
        func secondsFromNow(_ time: UnsafePointer<ASN1_TIME>?) -> Int {
            var days: Int32 = 0
            var seconds: Int32 = 0
            guard ASN1_TIME_diff(&days, &seconds, nil, time) == 1 else { return 0 }
            return Int(days) * 86_400 + Int(seconds)
        }
        return (secondsFromNow(X509_get0_notBefore(certificate)), secondsFromNow(X509_get0_notAfter(certificate)))
    }

    private static func makeKey() throws(DTLSError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "EVP_PKEY_CTX_new_from_name(EC) failed"))
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "generating a P-256 key failed"))
        }
        return key
    }

    private static func fill(_ certificate: OpaquePointer, key: OpaquePointer) throws(DTLSError) {
        func check(_ ok: Bool, _ step: String) throws(DTLSError) {
            if !ok { throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "\(step) failed")) }
        }
        try check(X509_set_version(certificate, Int(X509_VERSION_3)) == 1, "X509_set_version")

        // RFC 5280 §4.1.2.2: a positive serial of at most 20 octets; 64 random bits, top bit set.
        guard let serial = BN_new() else { throw .setupFailed("BN_new failed") }
        defer { BN_free(serial) }
        try check(BN_rand(serial, 64, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1, "BN_rand")
        try check(BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate)) != nil, "BN_to_ASN1_INTEGER")

        let seconds = Int(validity.components.seconds)
        try check(X509_gmtime_adj(X509_getm_notBefore(certificate), -seconds) != nil, "X509_gmtime_adj(notBefore)")
        try check(X509_gmtime_adj(X509_getm_notAfter(certificate), seconds) != nil, "X509_gmtime_adj(notAfter)")

        let name = X509_get_subject_name(certificate)
        try check(
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
            "X509_NAME_add_entry_by_txt")
        try check(X509_set_issuer_name(certificate, name) == 1, "X509_set_issuer_name")
        try check(X509_set_pubkey(certificate, key) == 1, "X509_set_pubkey")
        try check(X509_sign(certificate, key, EVP_sha256()) > 0, "X509_sign")
    }
}
