import Foundation
import GLibLoop
import ShareCore
import Synchronization
import WebRTCTransport

/// One call leg's transport, stacked as WebRTC stacks it: ICE (libnice) carries datagrams; the
/// first byte of each (RFC 7983) sends it to DTLS or to SRTP; DTLS-SRTP keys the SRTP session that
/// protects RTP and RTCP both ways. BUNDLE and rtcp-mux: one ICE component carries everything.
///
/// Thread use: the ICE agent's receive handler and the DTLS transport live on the `GLibLoop`
/// thread; `sendRTP`/`sendRTCP` may be called from any thread (SRTP and libnice lock for
/// themselves). Incoming RTP and RTCP reach the handlers on the loop thread, unprotected.
///
/// Consent to send (RFC 7675 §5.1, `ConsentTimer`): once connected, a look every 100 ms on the
/// loop thread; when we have sent for 30 s and nothing authenticated (SRTP or SRTCP that passed
/// libsrtp) came back, nothing more leaves — RTP, RTCP, DTLS — and the state fails with
/// `ConsentTimer.expiredReason`. libnice's checks on the pair go on (they are how consent would
/// be regained); its own 50 s rule stays behind this one.
public final class SecureTransport: Sendable {
    public enum State: Sendable, Equatable, CustomStringConvertible {
        case new, connecting, connected
        case failed(String)
        case closed

        public var description: String {
            switch self {
            case .new: "new"
            case .connecting: "connecting"
            case .connected: "connected"
            case .failed(let reason): "failed: \(reason)"
            case .closed: "closed"
            }
        }
    }

    public struct Counters: Sendable, Equatable {
        public var rtpSent = 0, rtcpSent = 0, rtpReceived = 0, rtcpReceived = 0
        public var bytesSent = 0, bytesReceived = 0
        public var protectFailures = 0, unprotectFailures = 0, dropped = 0, sendRefused = 0
    }

    public typealias PacketHandler = @Sendable ([UInt8]) -> Void

    public let ice: ICEAgent
    public let certificate: DTLSCertificate
    private let loop: GLibLoop
    private let logger: Logger
    private let demux = PacketDemux()
    private let shared = Locked(Shared())
    private let dtls: LoopConfined<DTLSTransport?>
    private let stateWaiters = Locked<[CheckedContinuation<Void, any Error>]>([])
    private let timer = Locked<GLibTimer?>(nil)
    private let consentTimer = Locked<GLibTimer?>(nil)
    /// Set once, when consent expired: every send is refused from then on.
    private let consentExpired = Atomic<Bool>(false)
    /// DTLS datagrams ICE refused because it had no pair yet, sent once it has one. A DTLS client
    /// may send its ClientHello as soon as its own checks succeed, before ours do: libnice hands us
    /// the hello, and our answer went nowhere. OpenSSL then waited out its retransmission timer
    /// (250 ms), and Chromium's first frame came 0.3 s later than it could (on a 600 kbit/s link,
    /// where our checks finish a little later, in every run).
    private let heldForICE = Locked<[[UInt8]]>([])
    static let heldForICELimit = 32

    private struct Shared {
        var state: State = .new
        var srtp: SRTPSession?
        var counters = Counters()
        var consent: ConsentTimer?
        var rtpHandler: PacketHandler?
        var rtcpHandler: PacketHandler?
        var stateHandler: (@Sendable (State) -> Void)?
    }

    public init(loop: GLibLoop, ice configuration: ICEAgent.Configuration, certificate: DTLSCertificate, logger: Logger)
    {
        self.loop = loop
        dtls = LoopConfined(nil, on: loop)
        self.logger = logger
        self.certificate = certificate
        ice = ICEAgent(loop: loop, configuration: configuration, logger: logger)
    }

    public var state: State { shared.withLock { $0.state } }
    public var counters: Counters { shared.withLock { $0.counters } }
    public var demuxCounts: PacketDemux.Counts { demux.counts }
    public var srtpProfile: SRTPProfile? { shared.withLock { $0.srtp?.profile } }

    /// Handlers for unprotected incoming RTP and RTCP, and for state changes. Set before `start`.
    public func setHandlers(rtp: PacketHandler?, rtcp: PacketHandler?, state: (@Sendable (State) -> Void)? = nil) {
        shared.withLock {
            $0.rtpHandler = rtp
            $0.rtcpHandler = rtcp
            $0.stateHandler = state
        }
    }

    /// Starts ICE gathering; returns the local ICE credentials.
    public func startICE() async throws -> ICEAgent.Credentials {
        try ice.setReceiveHandler { [weak self] buffer in self?.receive(buffer) }
        setState(.connecting)
        return try await ice.start()
    }

    /// Starts DTLS over ICE once the remote description is known: `role` from the SDP's
    /// `a=setup`, `remoteFingerprints` from its `a=fingerprint` lines (the certificate must match
    /// one, see `DTLSFingerprint.accepted`). Returns when SRTP keys are in place, or throws the
    /// reason the connection failed (ICE, DTLS, or `timeout`).
    public func connect(role: DTLSRole, remoteFingerprints: [DTLSFingerprint], timeout: Duration = .seconds(30))
        async throws
    {
        let certificate = self.certificate, logger = self.logger, ice = self.ice
        try await loop.perform { [self] in
            var configuration = DTLSTransport.Configuration(role: role, remoteFingerprints: remoteFingerprints)
            configuration.handshakeTimeout = timeout
            let transport = try DTLSTransport(certificate: certificate, configuration: configuration, logger: logger) {
                [weak self] datagram in
                guard let self, !self.consentExpired.load(ordering: .relaxed) else { return }
                if !ice.send(datagram), !ice.state.isConnected {
                    self.heldForICE.withLock {
                        if $0.count < Self.heldForICELimit { $0.append(datagram) }
                    }
                }
            }
            transport.onStateChange = { [weak self] state in self?.dtlsStateChanged(state) }
            dtls.value = transport
        }
        // Drive DTLS retransmissions, its handshake timeout and a server's repeated final flight
        // from the loop.
        let repeating = loop.repeating(every: .milliseconds(50)) { [weak self] in
            guard let self, let transport = self.dtls.value else { return false }
            transport.handleTimeout(now: .now)
            return transport.state == .connecting || transport.state == .new || transport.repeatsFinalFlight
        }
        timer.withLock { $0 = repeating }
        // The DTLS client speaks first, once ICE has a pair; the server waits for its ClientHello.
        let iceWatch = Task { [weak self] in
            for await state in ice.stateChanges {
                guard let self else { return }
                if state.isConnected {
                    self.dtls.invoke { [self] in
                        self.sendHeldForICE()
                        $0?.start(now: .now)
                    }
                } else if case .failed(let reason) = state {
                    self.setState(.failed("ICE: \(reason)"))
                    return
                }
            }
        }
        defer { iceWatch.cancel() }
        if ice.state.isConnected { dtls.invoke { $0?.start(now: .now) } }
        try await waitConnected(timeout: timeout)
    }

    /// Protects and sends one RTP packet; false when there is no connection or SRTP refused it.
    @discardableResult
    public func sendRTP(_ packet: [UInt8]) -> Bool { send(packet, rtcp: false) }

    @discardableResult
    public func sendRTCP(_ packet: [UInt8]) -> Bool { send(packet, rtcp: true) }

    public func close() async {
        timer.withLock {
            $0?.cancel(); $0 = nil
        }
        consentTimer.withLock {
            $0?.cancel(); $0 = nil
        }
        try? await loop.perform { [self] in
            dtls.value?.close()
            dtls.value = nil
        }
        await ice.close()
        setState(.closed)
        // Nothing arrives any more: let go of what the handlers hold.
        setHandlers(rtp: nil, rtcp: nil, state: nil)
    }

    // MARK: Internals

    /// On the loop thread, once ICE has a pair: the DTLS datagrams it refused before, in order.
    private func sendHeldForICE() {
        let held = heldForICE.withLock { held in
            defer { held = [] }
            return held
        }
        guard !held.isEmpty else { return }
        let sent = held.reduce(0) { $0 + (ice.send($1) ? 1 : 0) }
        logger.debug(
            "DTLS datagrams sent once ICE had a pair", ["dtls.datagrams": "\(sent)", "dtls.held": "\(held.count)"])
    }

    private func send(_ packet: [UInt8], rtcp: Bool) -> Bool {
        guard let srtp = shared.withLock({ $0.srtp }) else { return false }
        if consentExpired.load(ordering: .relaxed) {
            shared.withLock { $0.counters.sendRefused += 1 }
            return false
        }
        let protected: [UInt8]
        do {
            protected = rtcp ? try srtp.protectRTCP(packet) : try srtp.protect(rtp: packet)
        } catch {
            shared.withLock { $0.counters.protectFailures += 1 }
            return false
        }
        let sent = ice.send(protected)
        shared.withLock {
            if sent {
                if rtcp { $0.counters.rtcpSent += 1 } else { $0.counters.rtpSent += 1 }
                $0.counters.bytesSent += protected.count
            } else {
                $0.counters.sendRefused += 1
            }
        }
        return sent
    }

    /// On the loop thread: one datagram from ICE.
    private func receive(_ buffer: UnsafeRawBufferPointer) {
        let bytes = Array(buffer.bindMemory(to: UInt8.self))
        let kind = demux.classify(bytes)  // counts each datagram once
        switch kind {
        case .dtls:
            dtls.value?.receive(bytes)
        case .rtp, .rtcp:
            let isRTCP = kind == .rtcp
            let (srtp, handler) = shared.withLock { ($0.srtp, isRTCP ? $0.rtcpHandler : $0.rtpHandler) }
            guard let srtp else { shared.withLock { $0.counters.dropped += 1 }; return }
            do {
                let clear = isRTCP ? try srtp.unprotectRTCP(bytes) : try srtp.unprotect(srtp: bytes)
                shared.withLock {
                    if isRTCP { $0.counters.rtcpReceived += 1 } else { $0.counters.rtpReceived += 1 }
                    $0.counters.bytesReceived += bytes.count
                }
                handler?(clear)
            } catch {
                shared.withLock { $0.counters.unprotectFailures += 1 }
            }
        case .stun, .dropped:
            shared.withLock { $0.counters.dropped += 1 }
        }
    }

    private func dtlsStateChanged(_ state: DTLSTransport.State) {
        switch state {
        case .connected:
            guard let keys = dtls.value?.srtpKeys, let role = dtls.value?.configuration.role else {
                setState(.failed("DTLS connected without SRTP keys (the peer negotiated no SRTP profile)"))
                return
            }
            do {
                let srtp = try SRTPSession(keys: keys, role: role, logger: logger)
                shared.withLock { $0.srtp = srtp }
                logger.info("DTLS-SRTP connected", ["srtp.profile": keys.profile.rawValue, "dtls.role": role.rawValue])
                setState(.connected)
                startConsentLooks()
            } catch {
                setState(.failed("SRTP: \(error)"))
            }
        case .failed(let error):
            setState(.failed("\(error)"))  // DTLSError says "DTLS: …" itself
        case .closed:
            if self.state != .closed { setState(.failed("DTLS: the peer closed the connection")) }
        case .new, .connecting:
            break
        }
    }

    // MARK: Consent (loop thread)

    private static let consentLookEvery: Duration = .milliseconds(100)

    /// Authenticated packets in and packets out so far, as `ConsentTimer` counts them.
    private static func consentCounts(_ counters: Counters) -> (heard: Int, sent: Int) {
        (counters.rtpReceived + counters.rtcpReceived, counters.rtpSent + counters.rtcpSent)
    }

    private func startConsentLooks() {
        shared.withLock {
            let counts = Self.consentCounts($0.counters)
            $0.consent = ConsentTimer(
                connectedAt: .now, heard: counts.heard, sent: counts.sent,
                lookEvery: Self.consentLookEvery)
        }
        let looks = loop.repeating(every: Self.consentLookEvery) { [weak self] in
            self?.lookAtConsent() ?? false
        }
        consentTimer.withLock {
            $0?.cancel(); $0 = looks
        }
    }

    /// One look; false once there is nothing more to watch (consent expired, or the connection ended).
    private func lookAtConsent() -> Bool {
        let verdict = shared.withLock { shared -> ConsentTimer.Verdict? in
            guard shared.state == .connected, var consent = shared.consent else { return nil }
            let counts = Self.consentCounts(shared.counters)
            let verdict = consent.look(now: .now, heard: counts.heard, sent: counts.sent)
            shared.consent = consent
            return verdict
        }
        switch verdict {
        case nil: return false
        case .fresh: return true
        case .expired(let silence):
            consentExpired.store(true, ordering: .relaxed)
            logger.warning(
                ConsentTimer.expiredReason,
                [
                    "consent.silence": silence.secondsText,
                    "ice.pair": ice.selectedPair?.description ?? "none"
                ])
            setState(.failed(ConsentTimer.expiredReason))
            return false
        }
    }

    private func setState(_ new: State) {
        let (changed, handler) = shared.withLock { shared -> (Bool, (@Sendable (State) -> Void)?) in
            guard shared.state != new else { return (false, nil) }
            if case .failed = shared.state { return (false, nil) }  // the first failure is the reason
            if shared.state == .closed { return (false, nil) }
            shared.state = new
            return (true, shared.stateHandler)
        }
        guard changed else { return }
        handler?(new)
        if new == .connected || new == .closed || { if case .failed = new { true } else { false } }() {
            let waiters = stateWaiters.withLock { w -> [CheckedContinuation<Void, any Error>] in
                defer { w = [] }; return w
            }
            for waiter in waiters {
                if new == .connected {
                    waiter.resume()
                } else {
                    waiter.resume(throwing: TransportError.failed(new.description))
                }
            }
        }
    }

    private func waitConnected(timeout: Duration) async throws {
        let deadline = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.setState(
                .failed(
                    "no connection within \(timeout.components.seconds) s (ICE \(self?.ice.state.description ?? "?"))"))
        }
        defer { deadline.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let immediate: State? = shared.withLock { shared in
                switch shared.state {
                case .connected, .failed, .closed: return shared.state
                default:
                    stateWaiters.withLock { $0.append(continuation) }
                    return nil
                }
            }
            if let immediate {
                if immediate == .connected {
                    continuation.resume()
                } else {
                    continuation.resume(throwing: TransportError.failed(immediate.description))
                }
            }
        }
    }
}

public enum TransportError: Error, CustomStringConvertible, Sendable {
    case failed(String)
    public var description: String {
        switch self {
        case .failed(let reason): "connection \(reason)"
        }
    }
}
