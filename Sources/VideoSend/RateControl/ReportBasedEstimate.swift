import Foundation

/// The estimate for a receiver that gives no transport-wide feedback (aiortc, older SFUs, many WHIP
/// ingest servers, or feedback that stopped): in the manner of libwebrtc's send-side loss-based
/// estimation, moved by what receiver reports say — the fraction lost and the round trip — and by
/// the receiver's REMB where that says more than we send gets through.
///
/// Per receiver report (about one a second), with the loss taken as the median of this report's
/// fraction and the two before it. The caller counts the fraction in packets over the last reports
/// (`ReportedLoss`: at least 200 packets, within 5 s); one report's own fraction covers a second — at a few
/// hundred kbit/s a few dozen packets — and 10 % random loss reads anywhere from 0 to 40 % in it:
/// - over 10 % lost with a queue building (the round trip over its least by `holdQueueMicros`),
///   or over `heavyLoss` whatever the round trip: down to (1 − loss/2) of the estimate, at most
///   once per 300 ms + a round trip. Loss at a steady round trip is the path's, not ours — a lossy
///   radio link, a policer — and sending less does not make it less (classic loss-based control
///   cuts there, and on 10 % random loss it cuts to nothing);
/// - the round trip `queueMicros` (60 ms) over the least seen: a queue is building at the
///   bottleneck before it drops anything, down to 0.9 of the estimate, as often as the above;
/// - the round trip over its least by `holdQueueMicros`, or 10–25 % lost at a steady round trip:
///   it holds — 10 % or the path's own loss and `pathLossMargin`, whichever is more (`pathLoss`:
///   a link that drops a tenth of everything at random reads 7–12 % in the median, and held there
///   on the reports over 10 %, the share stayed at the start rate);
/// - otherwise up — under 2 % lost by 15 % a second until the first decrease (the start) and 8 %
///   after it; 2–10 % lost at a steady round trip (the path's loss) by the 8 % only — but never
///   past 1.2 × what was sent in the last second (+10 kbit/s), as libwebrtc caps its estimate by
///   what was acknowledged: without feedback per packet nothing shows the link carries a rate
///   that was never sent, and an encoder that sent 70 % of its target on cheap content sends all
///   of it the moment the content turns busy — so the target is never more than a fifth over what
///   the link carried. The start's 15 % a second is what the link is overrun by, at most, in the
///   second before a report shows it. No increase while the round trip is over its least by
///   `increaseQueueMicros` (a queue starting: on a 1.5 Mbit/s link it read 8 and 14 ms the two
///   seconds before loss); the first such report ends the start's climb, and an estimate over
///   what was sent comes down to it (`increaseQueueMicros`);
/// - while the sender is application-limited (it sent under `applicationLimited` of the
///   estimate: a still or cheap screen) it holds. Sending little is not a reason to lower the
///   estimate, and the estimate is not raised on a rate that was never tried — so it probes: the
///   pacer tops the link up to `probeBitrate` with padding (3 × the estimate the first time while it
///   is near where it started, 1.5 × otherwise; the first once two reports in a row found the sender application-limited, not at a
///   share's start, and none within `probeAfterFilledMicros` of a report that found the sender
///   filling the estimate), and the first report at least `probeJudgedAfterMicros` later judges it. Clean (under
///   2 % of the packets lost, no queue showing in the round trip): the link carried it, and the
///   estimate becomes what was sent over that second; the next probe follows at once while the
///   sender stays application-limited, up to the maximum, until one raises it by under a quarter
///   (then none for `probeRestMicros`); and only while the encoders say the target holds them
///   under their best (`encodersWantMore`). NACKs for `probeStopNACKs` packets while it runs
///   stop it at once, not at the next report: the padding has made the link drop media, and a
///   probe at 1.5 × a 600 kbit/s link that ran to the report lost a third of a second's packets,
///   more than the retransmission budget repairs (aiortc decoded 13, 2 and 0 frames in the three
///   seconds from its start, and asked for 13 keyframes). Loss or a queue: the probe stops, the
///   estimate holds (the congestion was the padding's, and it ends with it; on loss, unless the
///   report shows less delivered than the estimate — sent less lost — which it then comes down
///   to: the media alone overruns the link) — through the reports
///   of the next `probeAftermathMicros` too, which still count the padding's loss and queue — no probe comes
///   for `probeBackoffMicros`, doubling to a minute, and for a minute none goes past 0.85 × the
///   rate that failed. A cheap screen on a clean link gets a target
///   its full size needs within a few seconds instead of staying at the start rate (the target
///   follows what the content sends, the size follows the target); a still screen at its full
///   size whose repeats cost nothing stops probing at the maximum.
///
/// A REMB counts only once the round trip confirms it: when a queue shows (the round trip over
/// its least by `holdQueueMicros`) or the loss is heavy, and the REMB is below what we send, the
/// estimate goes down to the REMB rather than by the fixed step. A REMB alone is not taken as a
/// cap: aiortc's follows what arrives (it starts at it, and rises to at most 1.5 × it), so
/// following it down would tie the estimate to the content — cheap content sends little, the REMB
/// follows, the size follows the REMB, and a still screen ends as a thumbnail. Nor is loss at a
/// steady round trip a confirmation: on a path that loses a tenth at random, aiortc's REMB sits
/// under what we send (a tenth never arrives) and would ratchet the estimate down.
///
/// A value: every input carries `nowMicros`.
public struct ReportBasedEstimate: Sendable, Equatable {
    /// Nothing shows where the link ends before the rate passes it (no feedback per packet, no
    /// probes): the first step past it overshoots by at most this much.
    public static let startIncrease = 1.15
    public static let increase = 1.08
    /// The estimate is never raised past this much over what was sent in the last second.
    public static let sentHeadroom = 1.2
    public static let applicationLimited = 0.65
    public static let queueMicros: Int64 = 60_000
    /// Round trips this much over the least are near it: no decrease, but no increase either.
    public static let holdQueueMicros: Int64 = 25_000
    /// An increase waits while the round trip is over its least by more than this (or a fifth
    /// of the least, on a long path): a queue is starting at the bottleneck.
    ///
    /// The first such report, while the sender is not application-limited, ends the start's climb
    /// and settles the estimate on what was sent: that climb (15 % a second, capped at 1.2 × what
    /// was sent) runs past the link before a report shows it. On the 1.5 Mbit/s link the estimate
    /// stood at 1,638–1,675 kbit/s when the first report found a queue starting (1,421–1,506
    /// sent), and the next second sent 1,796–1,923 (the `links` gate's limit is 1,800), the
    /// periodic keyframe on top in one run.
    public static let increaseQueueMicros: Int64 = 8_000
    /// Loss this heavy lowers the estimate even at a steady round trip.
    public static let heavyLoss = 0.25
    /// The first probe tops the link up to this many times the estimate; later ones to `probeStep`.
    /// Only while the estimate is still within `firstProbeReach` of where it started (a still
    /// screen at the start rate): once the reports have raised it, the sender has filled it, and a
    /// probe three times over it runs past the link for a second (on a 1.5 Mbit/s link a share
    /// whose estimate had climbed to 686 kbit/s, briefly application-limited by a new size and its
    /// keyframe, padded to 2 Mbit/s and sent 1.8 Mbit/s that second). Within 1.2 ×: the start's
    /// first report may raise it once (15 %) before the content shows itself cheap; an estimate
    /// the reports raised further was filled. (At 1.5 × a share on the 600 kbit/s link whose
    /// estimate had climbed to 442 kbit/s probed at 1,328: the NACKs stopped it within the second,
    /// and aiortc's picture still stood for 3 s.)
    public static let firstProbeStep = 3.0
    public static let firstProbeReach = 1.2
    /// Each next probe: half again the estimate. (At 2 × a probe past a 1.5 Mbit/s link sent
    /// 1.76 Mbit/s for a second and lost half of it.)
    public static let probeStep = 1.5
    /// A probe is judged by the first report at least this long after it began (a report covers
    /// about a second: most of it is then the probe's).
    public static let probeJudgedAfterMicros: Int64 = 700_000
    /// A probe no report has judged stops after this long (the receiver stopped reporting).
    public static let probeLongestMicros: Int64 = 3_000_000
    /// NACKs for this many packets while a probe runs stop it (a probe starts only on a report
    /// under 2 % lost, so three within a second are the padding's loss, not the path's).
    public static let probeStopNACKs = 3
    /// No probe within this long of a report that found the sender filling the estimate (an
    /// increase: not application-limited, no loss or queue) once it is past `firstProbeReach` of
    /// the start: the climb on the reports finds the link's end at most 8–15 % past it, where a
    /// probe goes half again past the estimate. A sender that stops filling it for a moment (a new size and its keyframe, a
    /// quieter stretch of the content) is not a still screen: on the 600 kbit/s link, shares whose
    /// estimate the reports had raised to 535–573 kbit/s, application-limited for two reports
    /// after a size change, probed at 802–860 kbit/s, ran 0.4–1 s past the link before the NACKs
    /// stopped it, and aiortc's picture stood for 2–3 s.
    public static let probeAfterFilledMicros: Int64 = 10_000_000
    /// After a probe that found congestion, none for this long; it doubles each time, to a minute.
    public static let probeBackoffMicros: Int64 = 10_000_000
    /// A delivered probe that raised the estimate by less than this starts no next one: the
    /// estimate has come as far as the padding could take it.
    public static let probeGrowth = 1.25
    /// After probing has come as far as it could, none for this long.
    public static let probeRestMicros: Int64 = 30_000_000
    /// A probe that found congestion at a rate: later ones stay under this much of it, this long.
    public static let probeCeilingFraction = 0.85
    public static let probeCeilingMicros: Int64 = 60_000_000
    /// After a probe that found congestion, the reports this long after it stopped hold the
    /// estimate, and their fractions are not kept for the median: a receiver report counts the
    /// second before it was sent, and its round trip was measured on a sender report that waited
    /// in the padding's queue. (On a 1.5 Mbit/s link, aiortc's two reports after a 1.5 Mbit/s probe
    /// stopped read 16 % lost at a 199 ms round trip, and cut the estimate twice: the share fell
    /// from 1280 to 426 wide and its receiver asked for four keyframes.)
    public static let probeAftermathMicros: Int64 = 2_500_000
    /// The path's own loss (`pathLoss`) is learned from the reports of this long.
    public static let pathLossWindowMicros: Int64 = 30_000_000
    /// … once there are this many of them.
    public static let pathLossReports = 3
    /// Loss this much over the path's own is ours: the estimate holds there.
    public static let pathLossMargin = 0.05

    public private(set) var estimate: Int
    /// True once anything lowered the estimate: the start's fast increase is over.
    public private(set) var startOver = false
    public private(set) var leastRTTMicros: Int64?
    /// What the last report did, for the statistics: "increase", "hold", "decrease" (loss, delay or REMB),
    /// or "application-limited".
    public private(set) var lastAction = "start"
    private var lastReportMicros: Int64?
    private var lastDecreaseMicros: Int64?
    private var remb: Int?
    private var recentFractions: [Double] = []
    /// A probe: the rate the padding tops the link up to, and since when (for `probeCeiling`, the
    /// rate a probe found congestion under and when).
    private struct Probe: Sendable, Equatable {
        var bitrate: Int
        var startedMicros: Int64
        /// The packets NACKed while it runs (stream and sequence number).
        var nacked: Set<Int64> = []
    }
    private var probe: Probe?
    /// The last report that found the sender filling the estimate (`probeAfterFilledMicros`).
    private var lastFilledMicros: Int64?
    private var probesDelivered = 0
    private var probesFailed = 0
    private var probeBlockedUntilMicros: Int64 = 0
    /// Until when reports count a failed probe's padding (`probeAftermathMicros`).
    private var probeAftermathUntilMicros: Int64 = 0
    /// Reports in a row that found the sender application-limited: a probe waits for two, so a
    /// share's first second (the encoder starting, a keyframe, then its first frames) is not taken
    /// for cheap content.
    private var applicationLimitedReports = 0
    /// The reports the path's own loss is learned from: when, and their loss (the median).
    private struct LossReport: Sendable, Equatable {
        var micros: Int64
        var fraction: Double
    }
    private var pathLossReports: [LossReport] = []
    /// What the path loses whatever is sent (a lossy radio link, a lossy hop): in the manner of
    /// libwebrtc's `LossBasedBweV2`, whose model splits the loss seen into the path's inherent
    /// loss and what sending past the link costs. Here: the lower quartile of the loss in the
    /// last `pathLossWindowMicros` of reports at a steady round trip that were not judged ours
    /// (so loss that rises with the rate — a policer — never teaches it: those reports hold and
    /// are left out, and once the reports it learned from are older than the window it forgets),
    /// and never over libwebrtc's bound on inherent loss, 5 % + 75 kbit/s over the rate sent
    /// (under 10 % at 1.5 Mbit/s: at high rates loss is more likely ours). 0 until
    /// `pathLossReports` reports.
    public private(set) var pathLoss = 0.0
    /// The last probe that found congestion: later probes stay under it for `probeCeilingMicros`.
    private var probeCeiling: Probe?
    /// The encoders say the target holds them under their best size or frame rate: only then is a
    /// higher estimate worth a probe (a still screen at its full size would pad for nothing).
    public var encodersWantMore = true

    public let startBitrate: Int

    public init(startBitrate: Int) {
        self.startBitrate = startBitrate
        estimate = startBitrate
    }

    /// Transport-wide feedback sets the rate while it arrives; this estimate takes over from there
    /// if it stops.
    public mutating func follow(_ bitsPerSecond: Int) { estimate = bitsPerSecond }

    public mutating func report(
        fractionLost fractionLostReported: Double, rttMicros: Int64?, sentBitrate: Int, bounds: ClosedRange<Int>,
        nowMicros: Int64
    ) {
        let elapsed = Double(min(max(nowMicros - (lastReportMicros ?? nowMicros - 1_000_000), 0), 1_000_000))
        lastReportMicros = nowMicros
        var queue: Int64 = 0
        if let rtt = rttMicros, rtt > 0 {
            leastRTTMicros = min(leastRTTMicros ?? rtt, rtt)
            queue = rtt - (leastRTTMicros ?? rtt)
        }
        if probe == nil, nowMicros < probeAftermathUntilMicros {
            // The failed probe's loss and queue, still in the reports.
            lastAction = "hold (after the probe)"
            return
        }
        recentFractions = Array((recentFractions + [fractionLostReported]).suffix(3))
        let fractionLost = Self.middle(recentFractions)
        let round = rttMicros ?? 100_000
        // A REMB under what we send, once the round trip shows congestion: the receiver's figure.
        let confirmed = remb.flatMap { $0 < sentBitrate ? Double($0) : nil }
        let queueing = queue > Self.holdQueueMicros
        let queueStarting = queue > max(Self.increaseQueueMicros, (leastRTTMicros ?? 0) / 5)
        // Loss over this is ours (10 % on a clean path).
        let ownLoss = max(0.10, pathLoss + Self.pathLossMargin)
        if probe == nil, !queueing {
            learnPathLoss(fractionLost, sentBitrate: sentBitrate, below: ownLoss, nowMicros: nowMicros)
        }
        if probe == nil, Double(sentBitrate) >= Self.applicationLimited * Double(estimate) {
            applicationLimitedReports = 0
        }
        if let running = probe {
            judge(
                running, fractionLost: fractionLostReported, queueing: queueStarting, sentBitrate: sentBitrate,
                bounds: bounds, nowMicros: nowMicros)
        } else if fractionLost > Self.heavyLoss || (fractionLost > ownLoss && queueing) {
            let step = Double(estimate) * (1 - 0.5 * fractionLost)
            decrease(to: min(step, confirmed ?? step), why: "decrease (loss)", rtt: round, now: nowMicros)
        } else if queue > Self.queueMicros {
            let step = Double(estimate) * 0.9
            decrease(to: min(step, confirmed ?? step), why: "decrease (delay)", rtt: round, now: nowMicros)
        } else if queueing {
            if let confirmed, confirmed < Double(estimate) {
                decrease(to: confirmed, why: "decrease (REMB)", rtt: round, now: nowMicros)
            } else {
                lastAction = "hold"
            }
        } else if fractionLost > ownLoss {
            lastAction = "hold"
        } else if Double(sentBitrate) < Self.applicationLimited * Double(estimate) {
            lastAction = "application-limited"
            applicationLimitedReports += 1
            if applicationLimitedReports >= 2, fractionLost < 0.02, !queueStarting {
                startProbe(bounds: bounds, nowMicros: nowMicros)
                if probe != nil { lastAction = "probing" }
            }
        } else if queueStarting {
            lastAction = "hold"
            if !startOver {
                // The first queue while the sender fills the estimate: the link's end is about what
                // was sent. The start's climb is over, and an estimate it took past that comes
                // back to it (`increaseQueueMicros`).
                startOver = true
                estimate = min(estimate, max(sentBitrate, bounds.lowerBound))
            }
        } else {
            // Loss at a steady round trip is the path's: only the slow increase through it.
            let factor = startOver || fractionLost >= 0.02 ? Self.increase : Self.startIncrease
            let raised = Double(estimate) * pow(factor, elapsed / 1_000_000) + 1000 * elapsed / 1_000_000
            estimate = max(estimate, min(Int(raised), Int(Self.sentHeadroom * Double(sentBitrate)) + 10_000))
            lastAction = "increase"
            if Double(estimate) > Double(startBitrate) * Self.firstProbeReach { lastFilledMicros = nowMicros }
        }
        estimate = min(max(estimate, bounds.lowerBound), bounds.upperBound)
    }

    /// A probe runs, or one that found congestion stopped within `probeAftermathMicros`: the loss
    /// is the padding's, and the link has the room the padding took (and no longer takes) for
    /// repairing it. Then repairs over the budget wait for it rather than being refused
    /// (`Pacer.setRepairWait`); at other times loss means the media alone overruns the link, and
    /// repairs that waited would fill the budget on top of it (on a 1.5 Mbit/s link, the second
    /// the climb without feedback crossed it sent 1,867 kbit/s with them, where 1,800 is the
    /// `links` gate's limit).
    public func repairsMayWait(nowMicros: Int64) -> Bool { probe != nil || nowMicros < probeAftermathUntilMicros }

    /// The rate the pacer tops the link up to with padding now, while a probe runs.
    public func probeBitrate(nowMicros: Int64) -> Int? {
        guard let probe, nowMicros - probe.startedMicros < Self.probeLongestMicros else { return nil }
        return probe.bitrate
    }

    private mutating func startProbe(bounds: ClosedRange<Int>, nowMicros: Int64, step: Double? = nil) {
        guard encodersWantMore, nowMicros >= probeBlockedUntilMicros else { return }
        if let filled = lastFilledMicros, nowMicros - filled < Self.probeAfterFilledMicros { return }
        var highest = bounds.upperBound
        if let ceiling = probeCeiling {
            if nowMicros < ceiling.startedMicros + Self.probeCeilingMicros {
                highest = min(highest, ceiling.bitrate)
            } else {
                probeCeiling = nil
            }
        }
        let first = probesDelivered == 0 && Double(estimate) <= Double(startBitrate) * Self.firstProbeReach
        let bitrate = min(highest, Int(Double(estimate) * (step ?? (first ? Self.firstProbeStep : Self.probeStep))))
        // Not worth its padding: under a quarter over the estimate.
        guard Double(bitrate) >= Double(estimate) * Self.probeGrowth else { return }
        probe = Probe(bitrate: bitrate, startedMicros: nowMicros)
    }

    /// A report while a probe runs: loss or a queue ends it (the estimate holds); clean, once it
    /// has run long enough, the estimate takes what was sent, and the next probe starts at once
    /// while it keeps paying (a quarter more each time) and the encoders want more.
    private mutating func judge(
        _ running: Probe, fractionLost: Double, queueing: Bool, sentBitrate: Int,
        bounds: ClosedRange<Int>, nowMicros: Int64
    ) {
        let lasted = nowMicros - running.startedMicros
        let lossy = fractionLost >= 0.02
        if lossy || queueing || lasted >= Self.probeLongestMicros {
            if lossy {
                // What the report shows the link delivered (it drops the padding and the media
                // alike). Over the estimate: the padding was the excess, and the estimate holds.
                // Under it: the media alone overruns the link, and the estimate comes down to it at
                // once, not after the aftermath (an estimate a probe had raised to 790 kbit/s on a
                // 600 kbit/s link, where the report that judged it came before the queue dropped
                // anything, held through three reports of 44, 56 and 38 % lost: aiortc decoded 3, 8
                // and 11 frames a second).
                let delivered = Int(Double(sentBitrate) * (1 - fractionLost))
                estimate = max(bounds.lowerBound, min(estimate, delivered))
            }
            stopProbe(
                running, why: lossy ? "loss" : queueing ? "queue" : "no report", nowMicros: nowMicros)
            return
        }
        guard lasted >= Self.probeJudgedAfterMicros else {
            lastAction = "probing"
            return
        }
        probe = nil
        probesDelivered += 1
        let before = estimate
        estimate = max(estimate, min(running.bitrate, sentBitrate))
        lastAction = "probe delivered"
        guard Double(estimate) >= Double(before) * Self.probeGrowth else {
            probeBlockedUntilMicros = nowMicros + Self.probeRestMicros
            return
        }
        startProbe(bounds: bounds, nowMicros: nowMicros, step: Self.probeStep)
    }

    /// A probe that failed: none for a while, and none past 0.85 × its rate for a minute (unless
    /// no report came to judge it); the reports of the next `probeAftermathMicros` hold.
    private mutating func stopProbe(_ running: Probe, why: String, nowMicros: Int64) {
        probe = nil
        probesFailed += 1
        if nowMicros - running.startedMicros < Self.probeLongestMicros {
            let below = Int(Double(running.bitrate) * Self.probeCeilingFraction)
            probeCeiling = Probe(bitrate: min(below, probeCeiling?.bitrate ?? below), startedMicros: nowMicros)
        }
        let backoff = min(Self.probeBackoffMicros << min(probesFailed - 1, 3), 60_000_000)
        probeBlockedUntilMicros = nowMicros + backoff
        probeAftermathUntilMicros = nowMicros + Self.probeAftermathMicros
        // The probe's fractions are the padding's: the median starts afresh after it.
        recentFractions = []
        lastAction = "probe stopped (\(why))"
    }

    /// A receiver's NACKs (each packet as its stream and sequence number): while a probe runs,
    /// `probeStopNACKs` packets asked for stop it. True when they did.
    @discardableResult
    public mutating func nacked(_ packets: [Int64], nowMicros: Int64) -> Bool {
        guard var running = probe, nowMicros - running.startedMicros < Self.probeLongestMicros else { return false }
        running.nacked.formUnion(packets)
        probe = running
        guard running.nacked.count >= Self.probeStopNACKs else { return false }
        stopProbe(running, why: "NACKs", nowMicros: nowMicros)
        return true
    }

    /// Keeps a report at a steady round trip for `pathLoss`, unless its loss was over what the
    /// path's own allows (`below`): that one is ours, and would teach the path our congestion.
    private mutating func learnPathLoss(_ fraction: Double, sentBitrate: Int, below: Double, nowMicros: Int64) {
        pathLossReports.removeAll { nowMicros - $0.micros > Self.pathLossWindowMicros }
        if fraction <= below {
            pathLossReports.append(LossReport(micros: nowMicros, fraction: fraction))
        }
        guard pathLossReports.count >= Self.pathLossReports else {
            pathLoss = 0
            return
        }
        let sorted = pathLossReports.map(\.fraction).sorted()
        let bound = min(Self.heavyLoss - 2 * Self.pathLossMargin, 0.05 + 75_000 / Double(max(sentBitrate, 1)))
        pathLoss = min(sorted[sorted.count / 4], bound)
    }

    /// The median of up to three fractions (of two, their mean).
    static func middle(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        switch sorted.count {
        case 0: return 0
        case 1: return sorted[0]
        case 2: return (sorted[0] + sorted[1]) / 2
        default: return sorted[sorted.count / 2]
        }
    }

    /// The receiver's latest REMB (nil: none, or lapsed), weighed at the next report.
    public mutating func receiverEstimate(_ bitsPerSecond: Int?) { remb = bitsPerSecond }

    private mutating func decrease(to value: Double, why: String, rtt: Int64, now: Int64) {
        startOver = true
        if let last = lastDecreaseMicros, now - last < 300_000 + rtt {
            lastAction = "hold"
            return
        }
        estimate = min(estimate, Int(max(value, Double(estimate) / 2)))
        lastDecreaseMicros = now
        lastAction = why
    }
}

/// What was sent over the last second, from every packet as it leaves (ten 100 ms buckets).
public struct SentRate: Sendable, Equatable {
    private var buckets = [Int](repeating: 0, count: 10)
    private var currentBucket: Int64?

    public init() {}

    public mutating func add(bytes: Int, nowMicros: Int64) {
        advance(to: nowMicros)
        buckets[Int(nowMicros / 100_000 % 10)] += bytes
    }

    /// Bits per second over the last second (the current bucket included).
    public mutating func bitsPerSecond(nowMicros: Int64) -> Int {
        advance(to: nowMicros)
        return buckets.reduce(0, +) * 8
    }

    private mutating func advance(to nowMicros: Int64) {
        let bucket = nowMicros / 100_000
        guard let current = currentBucket else {
            currentBucket = bucket
            return
        }
        guard bucket > current else { return }
        for b in (current + 1)...min(bucket, current + 10) { buckets[Int(b % 10)] = 0 }
        currentBucket = bucket
    }
}
