import CallMedia
import SDPWire
import ShareCore

/// The room call's decisions about the connection to one other participant, as pure values:
/// who keeps an offer in glare, when a failed connection is made again, whether an offer comes
/// from a new connection of theirs, and whether our screen section needs an offer. `CallSession`
/// carries them out; `now` comes in.
struct RoomCallRules: Sendable {
    /// Our id in the room ("p3"); nil before the welcome.
    var myID: String?

    /// The number of a room id, "p12" → 12, which orders participants (no number: 0).
    static func number(_ id: String?) -> Int {
        Int((id ?? "").drop { !$0.isNumber }) ?? 0
    }

    // MARK: Glare

    enum Glare: Equatable, Sendable {
        /// Ours stands; their offer is dropped and they answer ours.
        case keepOurOffer
        /// Ours is rolled back, theirs answered, and ours offered again after.
        case rollBackAndAnswer
    }

    /// Both sides offered at once: the larger id number rolls back its own offer and answers.
    func glare(with theirID: String) -> Glare {
        Self.number(myID) > Self.number(theirID) ? .rollBackAndAnswer : .keepOurOffer
    }

    // MARK: Renewal

    /// The waits before a failed connection to `theirID` is made again: the side that keeps its
    /// offer in glare (the smaller id) first waits 2 s, the other 15 s (so that one side noticing
    /// alone still renews), each renewal since the last connection twice as late, at most a
    /// minute (a network that stays away is tried once a minute).
    func renewalBackoff(with theirID: String, renewals: Int) -> Backoff {
        let first: Duration = Self.number(myID) < Self.number(theirID) ? .seconds(2) : .seconds(15)
        return Backoff(first: first, cap: .seconds(60), failures: renewals)
    }

    /// A connection failed since `failedSince` is made again once its wait is up, and only while
    /// the signalling is up and we are in the room (the new offer has to reach them).
    func renewalDue(
        with theirID: String, failedSince: ContinuousClock.Instant, renewals: Int,
        signallingUp: Bool, now: ContinuousClock.Instant
    ) -> Bool {
        guard signallingUp, myID != nil else { return false }
        return failedSince.duration(to: now) >= renewalBackoff(with: theirID, renewals: renewals).delay
    }

    // MARK: Offers

    /// An offer whose DTLS fingerprints share none with those of the connection we have comes
    /// from a new connection of theirs (theirs failed and was made again): ours must go too.
    /// Nothing known or nothing offered decides nothing.
    static func comesFromNewConnection(offered: Set<String>, known: Set<String>) -> Bool {
        !known.isEmpty && !offered.isEmpty && offered.isDisjoint(with: known)
    }

    /// Our screen section needs an offer: never negotiated, or negotiated in another direction
    /// than the one we want (sending, or inactive once the share stopped).
    static func screenNeedsOffer(wanted: MediaDirection, negotiated: MediaDirection?) -> Bool {
        guard let negotiated else { return true }
        return negotiated != (wanted == .inactive ? .inactive : .sendonly)
    }

    /// The `a=fingerprint` values of an SDP, session and media level, as SDPWire reads them
    /// (`sha-256 AB:CD:…`); empty when the text is not SDP.
    static func fingerprints(in sdp: String) -> Set<String> {
        guard let description = try? SessionDescription.parse(sdp) else { return [] }
        return Set(
            SessionNegotiation.fingerprintLines(description).map { "\($0.algorithm.lowercased()) \($0.hexString)" })
    }

    // MARK: Decoder wedges (a drill)

    /// A receiver decoder fault on one participant's screen (drills and tests), and what becomes
    /// of it as their screen changes: it waits for a screen that decodes and wedges it; a screen
    /// rebuilt on another section ends a plain wedge and takes a sticky one along; their share
    /// ending ends either (`CallSession` drops it then).
    struct Wedge: Equatable, Sendable {
        var sticky: Bool
        /// The mid of the screen section whose decoder is wedged (nil: none wedged yet).
        var mid: String?

        enum Step: Equatable, Sendable {
            /// Nothing to do: the screen's decoder is wedged already.
            case keep
            /// Wedge the decoder of the screen on `mid`; `followsRebuild`: a sticky wedge taking
            /// the new decoder of a rebuilt screen along.
            case wedge(mid: String, followsRebuild: Bool)
            /// Their screen was rebuilt: a plain wedge ends with the old decoder.
            case endedByRebuild
        }

        /// Their screen decodes on `screenMid`, its decoder wedged now or not.
        func step(screenMid: String, decoderWedged: Bool) -> Step {
            if let mid, mid != screenMid {
                return sticky ? .wedge(mid: screenMid, followsRebuild: true) : .endedByRebuild
            }
            if mid == screenMid, decoderWedged { return .keep }
            return .wedge(mid: screenMid, followsRebuild: false)
        }
    }
}

/// How soon signalling is tried again after a failed attempt. While the room server keeps our
/// place (a participant's grace, 15 s unless `serve --grace` says otherwise) every half second,
/// so a restart or a cut is bridged at once with the resume key; after that the server is gone
/// for longer than a cut, and the attempts back off as a WHIP share's do: 2 s, doubling to a
/// minute (a kiosk left in a room whose server is down for hours does not knock twice a second).
/// When it answers again we join as a new participant.
public struct SignallingRetry: Sendable, Equatable {
    public static let quickPeriod: Duration = .seconds(15)
    public static let quickDelay: Duration = .milliseconds(500)
    public static let backoff = Backoff(first: .seconds(2), cap: .seconds(60))

    /// Attempts that failed after the quick period.
    public private(set) var failures = 0

    public init() {}

    /// A failed attempt, `downFor` after signalling went down: the wait before the next.
    public mutating func failed(downFor: Duration) -> Duration {
        guard downFor >= Self.quickPeriod else { return Self.quickDelay }
        defer { failures += 1 }
        return Self.backoff.delay(afterFailures: failures)
    }

    /// Signalling is up again.
    public mutating func succeeded() { failures = 0 }
}

/// How long a room share goes on without its room server. Without `--reconnect` a share whose
/// signalling has been down `limit` (30 s, twice a participant's default grace: the server is
/// gone, not restarting) ends with that reason; with it, it keeps trying (`SignallingRetry`) and
/// joins again as a new participant when the server answers. A viewer (`watch`) keeps trying
/// either way. Pure: `observe` takes the time.
public struct RoomOutage: Sendable, Equatable {
    public static let limit: Duration = .seconds(30)
    public private(set) var downSince: ContinuousClock.Instant?

    public init() {}

    /// One second's reading of signalling; how long it has been down (nil while up).
    public mutating func observe(signallingUp: Bool, now: ContinuousClock.Instant) -> Duration? {
        if signallingUp {
            downSince = nil
            return nil
        }
        let since = downSince ?? now
        downSince = since
        return since.duration(to: now)
    }

    /// Why a share without `--reconnect` ends now, or nil while it goes on.
    public static func ending(downFor: Duration?, reconnect: Bool) -> String? {
        guard !reconnect, let downFor, downFor >= limit else { return nil }
        return "the room server has not answered for \(limit.components.seconds) s; "
            + "--reconnect keeps trying (2 s, then twice as long each time, at most a minute)"
    }
}
