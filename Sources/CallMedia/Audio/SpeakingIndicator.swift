import Foundation
import ShareCore

/// Whether someone is speaking, by seed 000's figures: a level between −42 dBFS (dark) and
/// −12 dBFS (full) lights the indicator once it has kept up 0.15 s; the glow rises with a 50 ms
/// attack and falls with a 300 ms release; `isSpeaking` is on while the glow is at 0.1 or more and
/// goes off under 0.05 (no flicker at the edge). Fed at the meter's 10 Hz with the loudest level of
/// each 100 ms; a pure value on the caller's clock.
public struct SpeakingIndicator: Sendable, Equatable {
    public static let darkDbfs = -42.0
    public static let fullDbfs = -12.0
    public static var sustain: Duration { .milliseconds(150) }
    public static let attackSeconds = 0.05
    public static let releaseSeconds = 0.3
    public static let onAt = 0.1
    public static let offUnder = 0.05

    /// 0 (dark) to 1 (full), smoothed.
    public private(set) var glow = 0.0
    public private(set) var isSpeaking = false
    private var aboveSince: ContinuousClock.Instant?
    private var last: ContinuousClock.Instant?

    public init() {}

    /// Where a level sits between dark and full, 0…1.
    public static func brightness(_ levelDbfs: Double) -> Double {
        min(1, max(0, (levelDbfs - darkDbfs) / (fullDbfs - darkDbfs)))
    }

    /// One meter reading; returns `isSpeaking` after it.
    @discardableResult
    public mutating func level(_ levelDbfs: Double, now: ContinuousClock.Instant) -> Bool {
        let step = last.map { $0.duration(to: now).inSeconds } ?? 0.1
        last = now
        let input = Self.brightness(levelDbfs)
        if input > 0 {
            aboveSince = aboveSince ?? now
        } else {
            aboveSince = nil
        }
        let voiced = aboveSince.map { now - $0 >= Self.sustain } ?? false
        let target = voiced ? input : 0
        let constant = target > glow ? Self.attackSeconds : Self.releaseSeconds
        glow += (target - glow) * (1 - exp(-max(0, step) / constant))
        if isSpeaking {
            if glow < Self.offUnder { isSpeaking = false }
        } else if voiced, glow >= Self.onAt {
            isSpeaking = true
        }
        return isSpeaking
    }
}

/// The speaking indicator at the meter's 10 Hz from 20 ms frames: each five frames, the loudest of
/// them is one reading.
public struct SpeakingMeter: Sendable, Equatable {
    public private(set) var indicator = SpeakingIndicator()
    private var frames = 0
    private var loudest = AudioLevel.silence

    public init() {}

    public var isSpeaking: Bool { indicator.isSpeaking }

    /// One 20 ms frame at `levelDbfs`.
    public mutating func frame(_ levelDbfs: Double, now: ContinuousClock.Instant) {
        frames += 1
        loudest = max(loudest, levelDbfs)
        guard frames == 5 else { return }
        indicator.level(loudest, now: now)
        frames = 0
        loudest = AudioLevel.silence
    }
}
