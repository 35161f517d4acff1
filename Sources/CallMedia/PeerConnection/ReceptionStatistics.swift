import RTPWire

/// What a receiver knows of one incoming RTP stream, kept as RFC 3550 Appendix A.1, A.3 and A.8
/// keep it, and turned into a report block for our receiver reports (§6.4.1). A pure value: the
/// caller passes each packet's arrival time.
public struct ReceptionStatistics: Sendable, Equatable {
    public let ssrc: UInt32
    public let clockRate: Int
    public private(set) var packetsReceived = 0
    public private(set) var bytesReceived = 0
    private var baseSequence: UInt32 = 0
    private var highestSequence: UInt16 = 0
    private var cycles: UInt32 = 0
    private var started = false
    /// Interarrival jitter in timestamp units, scaled by 16 as A.8 keeps it.
    private var jitterQ4: Int64 = 0
    private var lastTransit: Int64?
    private var expectedPrior: UInt32 = 0
    private var receivedPrior = 0
    /// The middle 32 bits of the last sender report's NTP time and when it arrived.
    private var lastSenderReport: (compact: UInt32, arrivalMicros: Int64)?

    public init(ssrc: UInt32, clockRate: Int) {
        self.ssrc = ssrc
        self.clockRate = clockRate
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.ssrc == b.ssrc && a.packetsReceived == b.packetsReceived
            && a.extendedHighestSequence == b.extendedHighestSequence
            && a.jitterQ4 == b.jitterQ4 && a.lastSenderReport?.compact == b.lastSenderReport?.compact
    }

    public var extendedHighestSequence: UInt32 { cycles &+ UInt32(highestSequence) }
    public var expected: Int { started ? Int(extendedHighestSequence &- baseSequence) + 1 : 0 }
    /// Packets expected but not received so far (negative with duplicates, as the RFC allows).
    public var cumulativeLost: Int { expected - packetsReceived }
    /// Interarrival jitter in timestamp units.
    public var jitter: UInt32 { UInt32(clamping: jitterQ4 >> 4) }
    public var jitterMilliseconds: Double { Double(jitter) * 1000 / Double(clockRate) }

    /// One packet of this stream arrived at `arrivalMicros` (a monotonic clock).
    public mutating func received(sequenceNumber: UInt16, timestamp: UInt32, bytes: Int, arrivalMicros: Int64) {
        packetsReceived += 1
        bytesReceived += bytes
        if !started {
            started = true
            baseSequence = UInt32(sequenceNumber)
            highestSequence = sequenceNumber
        } else {
            let delta = sequenceNumber &- highestSequence
            if delta != 0, delta < 0x8000 {
                if sequenceNumber < highestSequence { cycles &+= 1 << 16 }
                highestSequence = sequenceNumber
            }
        }
        // A.8: transit = arrival − timestamp, both in timestamp units; J += (|D| − J) / 16. The
        // product is 128-bit: after about 3.2 years of microseconds a 90 kHz rate overflows 64 bits.
        let arrival = Int64(truncatingIfNeeded: Int128(arrivalMicros) * Int128(clockRate) / 1_000_000)
        let transit = arrival &- Int64(timestamp)
        if let last = lastTransit {
            let d = Int64(clamping: (transit &- last).magnitude)
            // Wrapped timestamps would make a nonsense jump: ignore differences over a minute.
            if d < Int64(clockRate) * 60 { jitterQ4 += d - ((jitterQ4 + 8) >> 4) }
        }
        lastTransit = transit
    }

    /// A sender report for this stream arrived (its NTP time, for LSR and DLSR).
    public mutating func senderReportReceived(ntp: NTPTimestamp, arrivalMicros: Int64) {
        lastSenderReport = (ntp.compact, arrivalMicros)
    }

    /// The report block for an RR at `nowMicros`; the fraction lost covers the time since the
    /// previous block (A.3).
    public mutating func report(nowMicros: Int64) -> ReceptionReport {
        let expectedNow = UInt32(truncatingIfNeeded: expected)
        let expectedInterval = Int(expectedNow &- expectedPrior)
        let receivedInterval = packetsReceived - receivedPrior
        expectedPrior = expectedNow
        receivedPrior = packetsReceived
        let lostInterval = expectedInterval - receivedInterval
        let fraction: UInt8 =
            expectedInterval <= 0 || lostInterval <= 0 ? 0 : UInt8(clamping: (lostInterval << 8) / expectedInterval)
        var lsr: UInt32 = 0, dlsr: UInt32 = 0
        if let last = lastSenderReport {
            lsr = last.compact
            // In 1/65536 s, saturating: a decade since the last report overflows 64 bits.
            dlsr = UInt32(clamping: max(0, Int128(nowMicros) - Int128(last.arrivalMicros)) * 65536 / 1_000_000)
        }
        return ReceptionReport(
            ssrc: ssrc, fractionLost: fraction,
            cumulativeLost: Int32(clamping: cumulativeLost),
            extendedHighestSequenceNumber: extendedHighestSequence, jitter: jitter,
            lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }
}
