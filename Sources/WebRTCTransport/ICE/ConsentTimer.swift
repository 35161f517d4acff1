/// RFC 7675 §5.1 consent to send, as far as it can be seen from above libnice 0.1.21: consent
/// expires 30 s after the peer was last heard, and then nothing more may be sent to it.
///
/// The RFC refreshes consent with the authenticated STUN answer to a check on the selected pair.
/// libnice sends those checks (every 4–6 s, see `ICENiceAgent.start`) and takes their answers
/// itself: it has no signal or API that says one arrived, and it swallows the answers to checks it
/// did not send. What does reach us is what the peer sends over the pair, and the part of it that
/// only the peer can have made is what passed SRTP or SRTCP authentication (keys from our DTLS
/// handshake; libsrtp refuses replays). A receiving peer sends RTCP receiver reports every few
/// seconds and a sending one RTP and sender reports, so when none of it has arrived for 30 s the
/// path or the peer is gone. DTLS records do not count: before the handshake ends they are not
/// authenticated, and after it DTLS-SRTP carries nothing but alerts (a close_notify ends the
/// connection by itself). libnice's own rule stays behind this one: a pair whose checks go
/// unanswered for 50 s fails even while authenticated media still arrives.
///
/// Consent governs what we send: while we send nothing, a silent peer costs nothing and the
/// connection is left to libnice's checks. The 30 s run from the later of the last authenticated
/// packet and the first packet we sent after it.
///
/// A pure value, fed the transport's running counts once every `lookEvery` (`look(now:heard:sent:)`).
/// Packets counted since the previous look arrived, or left, no earlier than that look, and are
/// taken as of then; and consent ends at the last look before the 30 s are up, so sending has
/// stopped by the time they are. Once expired it stays expired: consent comes back only with a new
/// connection.
///
///     var consent = ConsentTimer(connectedAt: now, heard: 0, sent: 0)
///     // every 100 ms on the loop thread:
///     if case .expired = consent.look(now: .now, heard: authenticatedIn, sent: packetsOut) { stop sending, fail }
public struct ConsentTimer: Sendable, Equatable {
    public enum Verdict: Sendable, Equatable {
        case fresh
        /// `silentFor`: since the last authenticated packet (or the handshake), as of this look.
        case expired(silentFor: Duration)
    }

    /// RFC 7675 §5.1: "Consent expires after 30 seconds."
    public static let expiry: Duration = .seconds(30)
    /// What the connection says when consent runs out.
    public static let expiredReason = "consent expired: nothing heard from the peer for 30 s"

    public let expiry: Duration
    public let lookEvery: Duration
    private var previousLook: ContinuousClock.Instant
    /// No later than the last authenticated packet from the peer (the handshake at first).
    private var heardAt: ContinuousClock.Instant
    /// No later than the first packet we sent after `heardAt`; nil while we have sent nothing since.
    private var sendingSince: ContinuousClock.Instant?
    private var heardCount: Int
    private var sentCount: Int
    public private(set) var hasExpired = false

    /// `now`: the DTLS handshake has just finished (the peer proved its keys). `heard` and `sent`:
    /// the transport's running counts of authenticated packets in and packets out.
    public init(
        connectedAt now: ContinuousClock.Instant, heard: Int, sent: Int, expiry: Duration = Self.expiry,
        lookEvery: Duration = .milliseconds(100)
    ) {
        self.expiry = expiry
        self.lookEvery = lookEvery
        previousLook = now
        heardAt = now
        heardCount = heard
        sentCount = sent
    }

    public mutating func look(now: ContinuousClock.Instant, heard: Int, sent: Int) -> Verdict {
        defer { previousLook = max(previousLook, now) }
        if hasExpired { return .expired(silentFor: now - heardAt) }
        if heard != heardCount {
            heardCount = heard
            heardAt = previousLook
            sendingSince = nil
        }
        if sent != sentCount {
            sentCount = sent
            if sendingSince == nil { sendingSince = previousLook }
        }
        guard let since = sendingSince else { return .fresh }
        // The next look would come at or after the deadline: stop now rather than late.
        guard now + lookEvery >= max(since, heardAt) + expiry else { return .fresh }
        hasExpired = true
        return .expired(silentFor: now - heardAt)
    }
}
