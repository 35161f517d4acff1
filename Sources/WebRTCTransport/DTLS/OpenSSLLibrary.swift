internal import COpenSSL

/// OpenSSL's process-wide start, without the clean-up it would otherwise register with `atexit`.
///
/// That clean-up (`OPENSSL_cleanup`) frees OpenSSL's global tables while `exit` runs, and any
/// other thread still inside OpenSSL then — libsrtp's ciphers on a sending thread, a DTLS record,
/// a thread ending and dropping its OpenSSL state — writes into freed memory or frees it twice
/// (OpenSSL's own issues #6214 and #17469; glibc then aborts with "malloc_consolidate(): unaligned
/// fastbin chunk" or "double free"). Shown on this machine's OpenSSL 3.0: a thread making DTLS
/// contexts while the main thread calls `exit` crashed 119 runs of 300, and none of 300 with this
/// start. The process's memory goes back to the system at exit anyway.
///
/// Only the first initialisation decides, so `start()` runs before anything else touches OpenSSL:
/// sharectl calls it first thing, and every entry into OpenSSL here (certificates, DTLS contexts,
/// fingerprints, libsrtp, which uses OpenSSL's ciphers) calls it too.
public enum OpenSSLLibrary {
    private static let started: Bool = OPENSSL_init_ssl(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Starts OpenSSL without its exit-time clean-up (once; later calls only answer). False if
    /// OpenSSL could not start, which every use after it will report in its own words.
    @discardableResult
    public static func start() -> Bool { started }
}
