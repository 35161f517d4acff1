internal import CSRTP

/// libsrtp's process-wide start: `srtp_init` runs once, on first use, whichever thread gets there
/// first (a `static let` is initialised exactly once under Swift's own lock).
enum SRTPLibrary {
    private static let initStatus: UInt32 = {
        OpenSSLLibrary.start()  // libsrtp's ciphers are OpenSSL's: its start comes first
        return srtp_init().rawValue
    }()

    /// Starts libsrtp if it has not been started; throws if it could not be.
    static func ensureStarted() throws(SRTPError) {
        let status = initStatus
        guard status == srtp_err_status_ok.rawValue else {
            throw .libraryUnavailable("srtp_init returned \(status): \(statusMeaning(status))")
        }
    }

    /// What a libsrtp status number means, in words.
    static func statusMeaning(_ status: UInt32) -> String {
        switch status {
        case 0: "ok"
        case 1: "unspecified failure"
        case 2: "unsupported parameter"
        case 3: "could not allocate memory"
        case 5: "could not initialise"
        case 7: "authentication failure"
        case 8: "cipher failure"
        case 9: "replayed packet"
        case 10: "packet too old for the replay window"
        case 11: "algorithm failed its self-test"
        case 13: "no stream for this SSRC"
        case 15: "key expired"
        case 21: "could not parse the packet"
        case 25: "unknown master key index"
        case 26: "packet index too old"
        case 27: "packet index advanced too far"
        default: "status \(status)"
        }
    }
}
