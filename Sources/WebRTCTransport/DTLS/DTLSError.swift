/// Why a DTLS certificate, fingerprint or handshake failed, in words a person can read.
public enum DTLSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer's certificate is not the one its SDP announced (a man in the middle, or a mixed-up SDP).
    case fingerprintMismatch(expected: String, got: String)
    /// The peer finished its part of the handshake without a certificate.
    case noPeerCertificate
    /// The peer ended the handshake with a fatal alert (the alert's name, e.g. "bad certificate").
    case peerAlert(String)
    /// OpenSSL refused the handshake (its reason).
    case handshakeFailed(String)
    /// The handshake did not finish in time.
    case handshakeTimedOut(seconds: Int)
    /// Both ends completed DTLS but agreed on no SRTP protection profile.
    case noSRTPProfile(offered: String)
    /// The negotiated SRTP profile is not one this build can use.
    case unsupportedSRTPProfile(String)
    /// Exporting the SRTP keying material failed.
    case keyExportFailed(String)
    /// A fingerprint attribute value could not be read.
    case invalidFingerprint(value: String, reason: String)
    /// Making the local certificate or DTLS context failed (OpenSSL's reason).
    case setupFailed(String)

    public var description: String {
        switch self {
        case let .fingerprintMismatch(expected, got):
            return
                "DTLS: the peer's certificate fingerprint does not match the one in its SDP (expected \(expected), got \(got))"
        case .noPeerCertificate:
            return "DTLS: the peer sent no certificate, so it cannot be checked against its SDP fingerprint"
        case let .peerAlert(alert):
            return "DTLS: the peer refused the handshake (alert: \(alert))"
        case let .handshakeFailed(reason):
            return "DTLS: the handshake failed (\(reason))"
        case let .handshakeTimedOut(seconds):
            return
                "DTLS: the handshake did not finish within \(seconds) s — the peer is not answering; check the network path"
        case let .noSRTPProfile(offered):
            return "DTLS: the peer agreed on no SRTP protection profile (we offered \(offered))"
        case let .unsupportedSRTPProfile(name):
            return "DTLS: the peer chose the SRTP profile \(name), which this build cannot use"
        case let .keyExportFailed(reason):
            return "DTLS: exporting the SRTP keys failed (\(reason))"
        case let .invalidFingerprint(value, reason):
            return "DTLS: the fingerprint \"\(value)\" cannot be read: \(reason)"
        case let .setupFailed(reason):
            return "DTLS: setting up failed (\(reason))"
        }
    }
}
