/// Who hears whom (seed 000, DESIGN.md "Audio"): the audio path to and from each participant, and
/// the notices that say in words when one is not there. A pure value on the caller's clock: the
/// call session feeds it once a second with what it sees of each participant and what their last
/// report says of us.
///
/// - **hearing** them: the path is established: connected, and their Opus packets decoded and
///   played within the last 2 s, or connected and they say they are muted.
/// - **"No sound from NAME"**: their packets arrive and decode, they say they are unmuted, and the
///   peak stays under −85 dBFS for 5 s (`noSound`, reported as `noSoundFrom`).
/// - **"Reconnecting to NAME…"**: connected for 2 s, they send audio and are unmuted, and nothing
///   of theirs has decoded for 2 s.
/// - **"NAME is connecting and can't hear you yet"**: we send them audio, past a 1 s grace from
///   their joining and never past 20 s, until their report lists us in `hearing` (or says they hear
///   no sound from us).
/// - **"NAME isn't getting any sound from you"**: we send unmuted, and their report lists us in
///   `noSoundFrom`, or, while our connection to them is up and past the connecting notice, has not
///   listed us in `hearing` for 5 s.
public struct AudioPathRules: Sendable {
    public static var heardWithin: Duration { .seconds(2) }
    public static let noSoundDbfs = -85.0
    public static var noSoundAfter: Duration { .seconds(5) }
    public static var reconnectingAfter: Duration { .seconds(2) }
    public static var connectingGrace: Duration { .seconds(1) }
    public static var connectingAtMost: Duration { .seconds(20) }
    public static var notGettingAfter: Duration { .seconds(5) }

    /// What we see of one participant in one tick.
    public struct Observation: Sendable, Equatable {
        /// Our connection to them is connected.
        public var connected = false
        /// They send us audio (their audio section sends, as negotiated).
        public var theySendAudio = true
        /// Samples of theirs decoded so far, and the loudest decoded frame of the last second.
        public var samplesDecoded = 0
        public var levelDbfs = -120.0
        /// From their last report: they are muted, they list us in `hearing`, in `noSoundFrom`.
        public var theyAreMuted = false
        public var theyHearUs = false
        public var theyHearNoSoundFromUs = false
        /// We send them audio, and we are unmuted.
        public var weSendAudio = false
        public var weAreMuted = false

        public init() {}
    }

    public struct Verdict: Sendable, Equatable {
        public var hearing = false
        public var noSound = false
        public var reconnecting = false
        public var connecting = false
        public var notGettingOurSound = false

        public init() {}

        /// The words for a participant called `name`, most pressing first.
        public func notices(name: String) -> [String] {
            var lines: [String] = []
            if reconnecting { lines.append("Reconnecting to \(name)…") }
            if noSound { lines.append("No sound from \(name)") }
            if connecting { lines.append("\(name) is connecting and can't hear you yet") }
            if notGettingOurSound { lines.append("\(name) isn't getting any sound from you") }
            return lines
        }
    }

    private struct Path: Sendable {
        var joinedAt: ContinuousClock.Instant
        var connectedSince: ContinuousClock.Instant?
        var samples = 0
        var decodedAt: ContinuousClock.Instant?
        var quietSince: ContinuousClock.Instant?
        var heardUsOnce = false
        var notHearingUsSince: ContinuousClock.Instant?
    }

    private var paths: [String: Path] = [:]

    public init() {}

    /// A participant is in the call from `now` (the connecting grace counts from here).
    public mutating func joined(_ id: String, now: ContinuousClock.Instant) {
        if paths[id] == nil { paths[id] = Path(joinedAt: now) }
    }

    public mutating func left(_ id: String) { paths[id] = nil }

    /// One tick's observation of participant `id`; the verdict after it.
    public mutating func observe(_ id: String, _ seen: Observation, now: ContinuousClock.Instant) -> Verdict {
        var path = paths[id] ?? Path(joinedAt: now)
        defer { paths[id] = path }
        var verdict = Verdict()

        // Their audio to us.
        if seen.connected {
            path.connectedSince = path.connectedSince ?? now
        } else {
            path.connectedSince = nil
        }
        if seen.samplesDecoded > path.samples { path.decodedAt = now }
        if seen.samplesDecoded < path.samples { path.decodedAt = nil }  // a new receiver counts afresh
        path.samples = seen.samplesDecoded
        let flowing = path.decodedAt.map { now - $0 < Self.heardWithin } ?? false
        verdict.hearing = seen.connected && (flowing || seen.theyAreMuted)
        if seen.connected, flowing, !seen.theyAreMuted, seen.levelDbfs < Self.noSoundDbfs {
            path.quietSince = path.quietSince ?? now
        } else {
            path.quietSince = nil
        }
        verdict.noSound = path.quietSince.map { now - $0 >= Self.noSoundAfter } ?? false
        if let since = path.connectedSince, seen.theySendAudio, !seen.theyAreMuted, !flowing {
            let lastAudio = max(since, path.decodedAt ?? since)
            verdict.reconnecting = now - since >= Self.reconnectingAfter && now - lastAudio >= Self.reconnectingAfter
        }

        // Our audio to them, as their report says.
        if seen.theyHearUs { path.heardUsOnce = true }
        let sinceJoin = now - path.joinedAt
        let unmutedSend = seen.weSendAudio && !seen.weAreMuted
        verdict.connecting =
            seen.weSendAudio && !path.heardUsOnce && !seen.theyHearNoSoundFromUs
            && sinceJoin >= Self.connectingGrace && sinceJoin < Self.connectingAtMost
        if unmutedSend, seen.connected, !seen.theyHearUs, !verdict.connecting {
            path.notHearingUsSince = path.notHearingUsSince ?? now
        } else {
            path.notHearingUsSince = nil
        }
        verdict.notGettingOurSound =
            unmutedSend
            && (seen.theyHearNoSoundFromUs
                || (path.notHearingUsSince.map { now - $0 >= Self.notGettingAfter } ?? false))
        if verdict.notGettingOurSound { verdict.connecting = false }
        return verdict
    }
}
