internal import COpenSSL
internal import CShareSSL

/// The OpenSSL context (`SSL_CTX`) one DTLS transport runs under: DTLS 1.2 only, our certificate
/// and key, ECDHE with AES-GCM, the `use_srtp` profiles, a peer certificate required and checked by
/// `verify` (against the fingerprint in the peer's SDP, not against any authority).
/// Owns the handle; used by one transport.
final class DTLSContext {
    /// ECDHE-ECDSA (our certificate) and ECDHE-RSA (for peers with RSA certificates), AES-GCM only:
    /// every browser and WebRTC stack offers these, so the CBC-SHA fallbacks are left out.
    static let cipherList = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"
    ].joined(separator: ":")
    static let groups = "X25519:P-256:P-384"

    /// `SSL_CTX *`, freed in deinit.
    let handle: OpaquePointer

    typealias VerifyCallback = @convention(c) (Int32, OpaquePointer?) -> Int32
    typealias InfoCallback = @convention(c) (OpaquePointer?, Int32, Int32) -> Void

    init(
        certificate: DTLSCertificate, srtpProfiles: [SRTPProfile], verify: VerifyCallback,
        info: InfoCallback
    ) throws(DTLSError) {
        OpenSSLLibrary.start()
        OpenSSLErrorQueue.clear()
        guard let handle = SSL_CTX_new(DTLS_method()) else {
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "SSL_CTX_new(DTLS_method) failed"))
        }
        self.handle = handle
        func check(_ ok: Bool, _ step: String) throws(DTLSError) {
            if !ok { throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "\(step) failed")) }
        }
        try check(CShareSSL_CTX_set_min_proto_version(handle, DTLS1_2_VERSION) == 1, "setting DTLS 1.2 as the minimum")
        try check(CShareSSL_CTX_set_max_proto_version(handle, DTLS1_2_VERSION) == 1, "setting DTLS 1.2 as the maximum")
        _ = CShareSSL_CTX_set_dtls_options(handle)
        try check(SSL_CTX_set_cipher_list(handle, Self.cipherList) == 1, "SSL_CTX_set_cipher_list")
        try check(CShareSSL_CTX_set1_groups_list(handle, Self.groups) == 1, "SSL_CTX_set1_groups_list")
        guard !srtpProfiles.isEmpty else { throw .setupFailed("no SRTP profile to offer") }
        // SSL_CTX_set_tlsext_use_srtp returns 0 on success.
        try check(
            SSL_CTX_set_tlsext_use_srtp(handle, srtpProfiles.map(\.openSSLName).joined(separator: ":")) == 0,
            "SSL_CTX_set_tlsext_use_srtp")
        try check(SSL_CTX_use_certificate(handle, certificate.certificate) == 1, "SSL_CTX_use_certificate")
        try check(SSL_CTX_use_PrivateKey(handle, certificate.privateKey) == 1, "SSL_CTX_use_PrivateKey")
        try check(SSL_CTX_check_private_key(handle) == 1, "SSL_CTX_check_private_key")
        // Both ends must show a certificate (a server asks the client for one); `verify` decides.
        SSL_CTX_set_verify(handle, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verify)
        SSL_CTX_set_info_callback(handle, info)
    }

    deinit { SSL_CTX_free(handle) }
}
