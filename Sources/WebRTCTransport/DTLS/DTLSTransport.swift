internal import COpenSSL
internal import CShareSSL
import ShareCore

/// A DTLS 1.2 endpoint for DTLS-SRTP (RFC 5763, RFC 5764) over OpenSSL, with no socket of its own:
/// datagrams come in through `receive(_:)` and go out through the `send` closure, so it sits on
/// top of ICE (or, in tests, on top of another transport).
///
/// The peer's certificate is required and must match the fingerprint from its SDP; a mismatch
/// refuses the handshake (the peer gets a `bad_certificate` alert) and no keys are exported. On
/// success `srtpKeys` holds the negotiated profile and the RFC 5764 §4.2 keys.
///
/// Retransmission is driven by the owner: after any call, ask `nextTimeout(now:)` and call
/// `handleTimeout(now:)` at or after that instant. OpenSSL keeps the retransmission timer itself,
/// on the system clock, so an early call does nothing; `now` decides the overall handshake timeout.
///
/// Confined to one thread (the one that runs ICE for it, the GLib loop thread in a call): every
/// method, and the `send` and `onStateChange` closures, run on it. Calls from inside `send` or
/// `onStateChange` (a back-to-back peer answering at once) are queued and handled in order.
public final class DTLSTransport {
    public struct Configuration: Sendable {
        /// Client (`a=setup:active`) or server (`a=setup:passive`).
        public var role: DTLSRole
        /// The fingerprints from the peer's SDP (every `a=fingerprint`); its certificate must
        /// match one of those `DTLSFingerprint.accepted` keeps.
        public var remoteFingerprints: [DTLSFingerprint]
        /// The SRTP profiles to offer (client) or accept (server), best first. OpenSSL's server picks
        /// its own first profile that the client also offered.
        public var srtpProfiles: [SRTPProfile] = SRTPProfile.defaultPreference
        /// The largest datagram sent (UDP payload); 1200 leaves room for IPv6 and TURN headers.
        public var mtu: Int = 1200
        /// The first retransmission timeout; it doubles on each retransmission up to 60 s (RFC 6347
        /// §4.2.4.1). 250 ms rather than the RFC's 1 s, as WebRTC stacks do (libwebrtc starts from
        /// twice ICE's round trip, at least 50 ms): a flight lost at the start, which a shaper's
        /// queue full of the call's first bursts makes likely, otherwise holds back the first frame
        /// by a second (Chromium on a 600 kbit/s link showed it at 1.4–1.9 s; with 250 ms, 0.9 s;
        /// 100 ms did no better).
        public var initialRetransmitTimeout: Duration = .milliseconds(250)
        /// How long the handshake may take, from `start(now:)` (or the first `handleTimeout(now:)`).
        public var handshakeTimeout: Duration = .seconds(30)
        /// A server sends its final flight (ChangeCipherSpec, Finished) again this long after the
        /// handshake completed, counted from the first `handleTimeout(now:)` after it. A lost final
        /// flight otherwise costs the client its retransmission timer — 1 s, then 2 and 4 s if our
        /// answer is lost again: on 10 % loss a WHIP endpoint decrypted nothing for 7 s — while
        /// every packet we send meanwhile is undecryptable to it. A copy that arrives after the
        /// first is a duplicate record, which the client's replay check drops.
        public var finalFlightRepeats: [Duration] = [.milliseconds(200), .milliseconds(600)]

        public init(role: DTLSRole, remoteFingerprints: [DTLSFingerprint]) {
            self.role = role
            self.remoteFingerprints = remoteFingerprints
        }

        public init(role: DTLSRole, remoteFingerprint: DTLSFingerprint) {
            self.init(role: role, remoteFingerprints: [remoteFingerprint])
        }
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        case new
        case connecting
        case connected
        case failed(DTLSError)
        case closed

        public var description: String {
            switch self {
            case .new: "new"
            case .connecting: "connecting"
            case .connected: "connected"
            case let .failed(error): "failed: \(error)"
            case .closed: "closed"
            }
        }
    }

    public let configuration: Configuration
    public private(set) var state: State = .new
    /// The negotiated profile and keys, once `state` is `.connected` (never after a failed check).
    public private(set) var srtpKeys: SRTPKeyingMaterial?
    /// The fingerprint of the certificate the peer showed (the one it matched, else in the first
    /// accepted algorithm).
    public private(set) var peerFingerprint: DTLSFingerprint?
    /// Called after every state change, on the transport's thread.
    public var onStateChange: ((State) -> Void)?

    /// Datagrams handed to `send` and taken by `receive`, for statistics.
    public private(set) var datagramsSent = 0
    public private(set) var datagramsReceived = 0
    /// Records left out before OpenSSL saw them (`DTLSRecordFilter`): invalid, so dropped silently.
    public private(set) var recordsDropped = 0

    private let context: DTLSContext
    /// `SSL *`, freed in deinit (it owns both BIOs).
    private let ssl: OpaquePointer
    /// The memory BIO incoming datagrams are written into, one at a time; owned by `ssl`.
    private let incomingBIO: OpaquePointer
    private let send: ([UInt8]) -> Void
    private let logger: Logger

    private var outbox: [[UInt8]] = []
    private var inbox: [[UInt8]] = []
    private var isDraining = false
    private var handshakeStartedAt: ContinuousClock.Instant?
    /// Set by the verify callback when the peer's certificate does not match; wins over OpenSSL's reason.
    private var verificationFailure: DTLSError?
    /// The last fatal alert the peer sent.
    private var receivedAlert: String?
    /// A server's final flight as it first left, kept to send again (`finalFlightRepeats`), and
    /// when the repeats count from (set by the first `handleTimeout(now:)` after the handshake).
    private var finalFlight: [[UInt8]] = []
    private var finalFlightRepeatsLeft: [Duration] = []
    private var finalFlightSentAt: ContinuousClock.Instant?

    /// Sets up the transport; nothing is sent until `start(now:)` (or, for a server, the first datagram).
    public init(
        certificate: DTLSCertificate, configuration: Configuration, logger: Logger = .disabled,
        send: @escaping ([UInt8]) -> Void
    ) throws(DTLSError) {
        self.configuration = configuration
        self.send = send
        self.logger = logger.child("dtls", metadata: ["dtls.role": configuration.role.rawValue])
        context = try DTLSContext(
            certificate: certificate, srtpProfiles: configuration.srtpProfiles,
            verify: { preverify, storeContext in DTLSTransport.verifyCallback(preverify, storeContext) },
            info: { ssl, kind, value in DTLSTransport.infoCallback(ssl, kind, value) })
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.handle) else {
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "SSL_new failed"))
        }
        guard let incoming = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "BIO_new(BIO_s_mem) failed"))
        }
        // An empty memory BIO must read as "try again", not as end of file.
        _ = CShareSSL_BIO_set_mem_eof_return(incoming, -1)
        self.ssl = ssl
        incomingBIO = incoming
        // From here on `self` is whole: hand it to the callbacks (the SSL and its BIOs die with it).
        let userData = Unmanaged.passUnretained(self).toOpaque()
        guard let outgoing = DTLSDatagramBIOMethod.shared.makeBIO(userData: userData) else {
            BIO_free(incoming)
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "BIO_new(datagram method) failed"))
        }
        SSL_set_bio(ssl, incoming, outgoing)
        _ = SSL_set_ex_data(ssl, Self.sslUserDataIndex, userData)
        DTLS_set_timer_cb(ssl) { ssl, previous in DTLSTransport.timerCallback(ssl, previous) }
        guard CShareSSL_DTLS_set_link_mtu(ssl, configuration.mtu) == 1 else {
            throw .setupFailed(OpenSSLErrorQueue.drain(fallback: "the MTU \(configuration.mtu) is too small for DTLS"))
        }
        switch configuration.role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
    }

    deinit {
        SSL_free(ssl)
    }

    // MARK: Driving

    /// Starts the handshake: a client sends its ClientHello, a server waits for one.
    public func start(now: ContinuousClock.Instant) {
        guard state == .new else { return }
        handshakeStartedAt = now
        setState(.connecting)
        logger.debug("DTLS handshake starting", ["dtls.mtu": "\(configuration.mtu)"])
        drain()
    }

    /// One datagram from the peer (already demultiplexed as DTLS). Records that cannot be valid
    /// for this connection are dropped before OpenSSL sees them (`DTLSRecordFilter`), the rest by
    /// OpenSSL itself; none of them ends the association. Datagrams after a failure or close are ignored.
    public func receive(_ datagram: [UInt8]) {
        switch state {
        case .failed, .closed: return
        case .new:
            // The peer started first (a server's usual case): the handshake starts now.
            setState(.connecting)
        case .connecting, .connected: break
        }
        guard !datagram.isEmpty else { return }
        datagramsReceived += 1
        inbox.append(datagram)
        drain()
    }

    /// A server's final flight is still to be sent again: the owner keeps calling
    /// `handleTimeout(now:)` after the handshake until this is false.
    public var repeatsFinalFlight: Bool { state == .connected && !finalFlightRepeatsLeft.isEmpty }

    /// When `handleTimeout(now:)` should next be called, or nil when no retransmission is pending.
    public func nextTimeout(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard state == .connecting || state == .connected else { return nil }
        if repeatsFinalFlight, let delay = finalFlightRepeatsLeft.first {
            return finalFlightSentAt.map { $0 + delay } ?? now
        }
        var left = timeval()
        guard CShareSSL_DTLSv1_get_timeout(ssl, &left) == 1 else {
            // No retransmission timer; while connecting the handshake deadline still stands.
            if state == .connecting, let started = handshakeStartedAt {
                return started + configuration.handshakeTimeout
            }
            return nil
        }
        let retransmit = now + .seconds(Int64(left.tv_sec)) + .microseconds(Int64(left.tv_usec))
        if state == .connecting, let started = handshakeStartedAt {
            return min(retransmit, started + configuration.handshakeTimeout)
        }
        return retransmit
    }

    /// Retransmits the last flight if OpenSSL's timer has run out, and fails the handshake once it
    /// has taken longer than `configuration.handshakeTimeout`.
    public func handleTimeout(now: ContinuousClock.Instant) {
        guard state == .connecting || state == .connected else { return }
        if state == .connecting {
            let started = handshakeStartedAt ?? now
            handshakeStartedAt = started
            if now - started >= configuration.handshakeTimeout {
                fail(.handshakeTimedOut(seconds: Int(configuration.handshakeTimeout.components.seconds)))
                return
            }
        }
        if repeatsFinalFlight {
            repeatFinalFlightIfDue(now: now)
            return
        }
        OpenSSLErrorQueue.clear()
        let result = CShareSSL_DTLSv1_handle_timeout(ssl)
        if result < 0 {
            fail(
                .handshakeFailed(
                    "the peer did not answer the retransmitted handshake: "
                        + OpenSSLErrorQueue.drain(fallback: "too many retransmissions")))
            return
        }
        if result > 0 { logger.debug("DTLS flight retransmitted") }
        drain()
    }

    /// Sends the final flight again once its next repeat is due (the first call only starts the count).
    private func repeatFinalFlightIfDue(now: ContinuousClock.Instant) {
        guard let sentAt = finalFlightSentAt else {
            finalFlightSentAt = now
            return
        }
        guard let delay = finalFlightRepeatsLeft.first, now >= sentAt + delay else { return }
        finalFlightRepeatsLeft.removeFirst()
        logger.debug(
            "DTLS final flight sent again",
            ["dtls.datagrams": "\(finalFlight.count)", "dtls.after": "\(delay)"])
        for datagram in finalFlight {
            datagramsSent += 1
            send(datagram)
        }
        if finalFlightRepeatsLeft.isEmpty { finalFlight = [] }
    }

    /// Ends the connection: a connected transport sends close_notify first. Idempotent.
    public func close() {
        switch state {
        case .closed, .failed: return
        case .connected:
            OpenSSLErrorQueue.clear()
            _ = SSL_shutdown(ssl)
            OpenSSLErrorQueue.clear()
        case .new, .connecting: break
        }
        inbox.removeAll()
        setState(.closed)
        flushOutbox()
    }

    // MARK: Inside

    /// Feeds queued datagrams to OpenSSL one at a time and sends what it writes. Re-entrant calls
    /// (from `send` or `onStateChange`) only queue; the outermost call works the queue off.
    private func drain() {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        advance()
        flushOutbox()
        while !inbox.isEmpty {
            let datagram = inbox.removeFirst()
            guard state == .connecting || state == .connected else { inbox.removeAll(); break }
            let filtered = DTLSRecordFilter(handshakeComplete: state == .connected).filter(datagram)
            if !filtered.rejections.isEmpty {
                recordsDropped += filtered.rejections.count
                logger.debug(
                    "DTLS record dropped before OpenSSL",
                    ["dtls.reason": filtered.rejections.map(\.description).joined(separator: "; ")])
            }
            guard !filtered.kept.isEmpty else { continue }
            filtered.kept.withUnsafeBytes { bytes in
                _ = BIO_write(incomingBIO, bytes.baseAddress, Int32(bytes.count))
            }
            advance()
            discardUnreadInput()
            flushOutbox()
        }
    }

    private func advance() {
        switch state {
        case .connecting: stepHandshake()
        case .connected: readRecords()
        case .new, .failed, .closed: break
        }
    }

    private func stepHandshake() {
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            if configuration.role == .server, !outbox.isEmpty {
                // What this call wrote is the server's final flight.
                finalFlight = outbox
                finalFlightRepeatsLeft = configuration.finalFlightRepeats
            }
            finishHandshake()
            if state == .connected { readRecords() }
            return
        }
        handle(SSL_get_error(ssl, result), during: "handshake")
    }

    /// Reads what arrives after the handshake: alerts (close_notify), the peer's retransmitted final
    /// flight (OpenSSL answers it), and application data, which DTLS-SRTP does not use (dropped).
    private func readRecords() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while state == .connected {
            OpenSSLErrorQueue.clear()
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            if count > 0 {
                logger.debug("DTLS application data dropped (DTLS-SRTP carries none)", ["dtls.bytes": "\(count)"])
                continue
            }
            handle(SSL_get_error(ssl, count), during: "read")
            return
        }
    }

    private func handle(_ error: Int32, during step: String) {
        switch error {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        case SSL_ERROR_ZERO_RETURN:
            logger.info("DTLS peer closed the connection (close_notify)")
            inbox.removeAll()
            setState(.closed)
        default:
            if let verificationFailure {
                fail(verificationFailure)
            } else if let receivedAlert {
                fail(.peerAlert(receivedAlert))
            } else {
                fail(.handshakeFailed(OpenSSLErrorQueue.drain(fallback: "\(step) error \(error)")))
            }
        }
    }

    /// The handshake is done: check the peer's certificate once more, then export the SRTP keys.
    private func finishHandshake() {
        guard let certificate = SSL_get0_peer_certificate(ssl) else {
            fail(.noPeerCertificate)
            return
        }
        do {
            try matchPeerCertificate(certificate)
        } catch {
            fail(error)
            return
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl) else {
            fail(.noSRTPProfile(offered: configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")))
            return
        }
        guard let profile = SRTPProfile(protectionProfileID: selected.pointee.id) else {
            fail(
                .unsupportedSRTPProfile(
                    selected.pointee.name.map { String(cString: $0) } ?? "id \(selected.pointee.id)"))
            return
        }
        var exported = [UInt8](repeating: 0, count: SRTPKeyingMaterial.exportLength(for: profile))
        defer { for index in exported.indices { exported[index] = 0 } }
        let label = SRTPKeyingMaterial.exporterLabel
        OpenSSLErrorQueue.clear()
        guard SSL_export_keying_material(ssl, &exported, exported.count, label, label.utf8.count, nil, 0, 0) == 1 else {
            fail(.keyExportFailed(OpenSSLErrorQueue.drain(fallback: "SSL_export_keying_material failed")))
            return
        }
        do {
            srtpKeys = try SRTPKeyingMaterial(profile: profile, exported: exported)
        } catch {
            fail(.keyExportFailed(error.description))
            return
        }
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "?"
        logger.info("DTLS connected", ["dtls.cipher": cipher, "srtp.profile": profile.rawValue])
        setState(.connected)
    }

    private func fail(_ error: DTLSError) {
        if case .failed = state { return }
        srtpKeys = nil
        inbox.removeAll()
        logger.warning("\(error)")
        setState(.failed(error))
        // The alert OpenSSL wrote, if any, still goes out.
        flushOutbox()
    }

    private func setState(_ new: State) {
        guard new != state else { return }
        state = new
        onStateChange?(new)
    }

    /// Anything OpenSSL left unread of the last datagram (a broken record) must not run into the next.
    private func discardUnreadInput() {
        var scratch = [UInt8](repeating: 0, count: 2048)
        while BIO_ctrl_pending(incomingBIO) > 0 {
            if BIO_read(incomingBIO, &scratch, Int32(scratch.count)) <= 0 { break }
        }
    }

    private func flushOutbox() {
        while !outbox.isEmpty {
            let datagram = outbox.removeFirst()
            datagramsSent += 1
            send(datagram)
        }
    }

    /// Called by the datagram BIO, inside an OpenSSL call: queue now, send once OpenSSL returns.
    func enqueueOutgoing(_ datagram: [UInt8]) { outbox.append(datagram) }

    // MARK: Callbacks (trampolines from OpenSSL)

    /// The `SSL` ex-data slot holding the transport (slot 0 is the one `SSL_set_app_data` uses).
    private static let sslUserDataIndex: Int32 = 0

    static func from(callbackUserData: UnsafeMutableRawPointer) -> DTLSTransport {
        Unmanaged<DTLSTransport>.fromOpaque(callbackUserData).takeUnretainedValue()
    }

    private static func from(ssl: OpaquePointer?) -> DTLSTransport? {
        guard let ssl, let userData = SSL_get_ex_data(ssl, sslUserDataIndex) else { return nil }
        return from(callbackUserData: userData)
    }

    /// OpenSSL asks whether to accept the peer's certificate chain. There is no authority to ask:
    /// the leaf certificate is accepted exactly when it matches the SDP fingerprint.
    private static func verifyCallback(_ preverify: Int32, _ storeContext: OpaquePointer?) -> Int32 {
        guard let storeContext,
            let sslPointer = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()),
            let transport = from(ssl: OpaquePointer(sslPointer)),
            let leaf = X509_STORE_CTX_get0_cert(storeContext)
        else { return 0 }
        if transport.acceptsPeerCertificate(leaf) { return 1 }
        // Refused: the peer gets a bad_certificate alert (not "unknown CA": there is no CA here).
        X509_STORE_CTX_set_error(storeContext, X509_V_ERR_CERT_REJECTED)
        return 0
    }

    private func acceptsPeerCertificate(_ leaf: OpaquePointer) -> Bool {
        if verificationFailure != nil { return false }
        do {
            try matchPeerCertificate(leaf)
            return true
        } catch {
            verificationFailure = error
            return false
        }
    }

    /// Hashes `certificate` in each algorithm of the accepted fingerprints and looks for a match;
    /// `peerFingerprint` becomes the match, or the digest in the first accepted algorithm.
    private func matchPeerCertificate(_ certificate: OpaquePointer) throws(DTLSError) {
        let accepted = DTLSFingerprint.accepted(configuration.remoteFingerprints)
        var first: DTLSFingerprint?
        var hashed: Set<DTLSFingerprint.Algorithm> = []
        for algorithm in accepted.map(\.algorithm) where hashed.insert(algorithm).inserted {
            let got = try DTLSFingerprint.of(certificate: certificate, algorithm: algorithm)
            first = first ?? got
            if accepted.contains(got) {
                peerFingerprint = got
                return
            }
        }
        peerFingerprint = first
        throw .fingerprintMismatch(
            expected: accepted.map(\.sdpValue).joined(separator: " or "),
            got: first?.sdpValue ?? "nothing (no fingerprint to compare with)")
    }

    /// OpenSSL's state and alert notices: a fatal alert from the peer becomes the failure reason.
    private static func infoCallback(_ ssl: OpaquePointer?, _ kind: Int32, _ value: Int32) {
        guard kind & SSL_CB_ALERT != 0, let transport = from(ssl: ssl) else { return }
        let description = String(cString: SSL_alert_desc_string_long(value))
        let fatal = (value >> 8) == SSL3_AL_FATAL
        if kind & SSL_CB_READ != 0 {
            if fatal { transport.receivedAlert = description }
            transport.logger.debug("DTLS alert received", ["dtls.alert": description, "dtls.fatal": "\(fatal)"])
        } else {
            transport.logger.debug("DTLS alert sent", ["dtls.alert": description, "dtls.fatal": "\(fatal)"])
        }
    }

    /// OpenSSL asks for the next retransmission timeout: the configured first one, then doubling
    /// up to 60 s.
    private static func timerCallback(_ ssl: OpaquePointer?, _ previousMicroseconds: UInt32) -> UInt32 {
        let maximum: UInt32 = 60_000_000
        guard previousMicroseconds > 0 else {
            guard let transport = from(ssl: ssl) else { return 1_000_000 }
            let initial = transport.configuration.initialRetransmitTimeout
            let microseconds = initial.inMicroseconds
            return UInt32(clamping: max(1_000, min(Int64(maximum), microseconds)))
        }
        return min(maximum, previousMicroseconds.multipliedReportingOverflow(by: 2).partialValue)
    }
}

@available(*, unavailable)
extension DTLSTransport: Sendable {}
