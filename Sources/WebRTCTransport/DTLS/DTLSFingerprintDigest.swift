internal import COpenSSL

// The OpenSSL half of `DTLSFingerprint`: computing a certificate's fingerprint. Kept apart from
// the SDP value in DTLSFingerprint.swift, which is plain Swift (the fuzz targets compile it alone).

extension DTLSFingerprint.Algorithm {
    var evpDigest: OpaquePointer? {
        switch self {
        case .sha1: EVP_sha1()
        case .sha224: EVP_sha224()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
    }
}

extension DTLSFingerprint {
    /// The fingerprint of an OpenSSL certificate (`X509 *`) with `algorithm`.
    static func of(certificate: OpaquePointer, algorithm: Algorithm) throws(DTLSError) -> DTLSFingerprint {
        OpenSSLLibrary.start()
        var buffer = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, algorithm.evpDigest, &buffer, &length) == 1 else {
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "X509_digest failed"))
        }
        return try DTLSFingerprint(algorithm: algorithm, digest: Array(buffer.prefix(Int(length))))
    }
}
