import Foundation

/// Decides, frame by frame, the size and frame rate a screen leaves at under its policy, from the
/// target bitrate (congestion control), the source size, and what the encoder manages on this
/// machine. Pure: `update(now:…)` takes the time; tests drive it on a manual clock.
///
/// The size comes from a ladder of scales of the source (fitted inside the policy's long side).
/// A smaller step is taken at once; a larger one only after the target has carried it, with a
/// margin, for `upHold` — so a wobbling estimate does not make new encoders (and keyframes) every
/// second. The frame rate follows the target freely: it costs nothing to change.
///
/// What a frame costs is the policy's bits per pixel until the encoder shows otherwise. Content
/// cheaper than that (the encoder spends less than each frame's share of the target): the
/// measured cost with a margin, so a still or nearly still screen — whose frames cost a fraction
/// of the policy's figure — keeps its full size and the frame rate its target carries, instead of
/// sending a few cheap frames, being taken for a slow link, and shrinking step by step. Content
/// dearer than that (the encoder runs over each frame's share at its coarsest quantizer, as
/// libvpx does on busy content): the policy's figure times the overrun, so the size and frame
/// rate are those the target can really carry.
public struct SendShaper: Sendable {
    public struct Decision: Sendable, Hashable {
        public var shape: SendShape
        public var limit: SendLimit
    }

    /// Fractions of the fitted source size, largest first.
    public static let scales: [Double] = [1, 3.0 / 4, 2.0 / 3, 1.0 / 2, 1.0 / 3, 1.0 / 4]
    public static let upHold: Duration = .seconds(5)
    /// The machine must fall behind this long before it takes the size down (a passing load
    /// spike only costs frame rate).
    public static let cpuHold: Duration = .seconds(3)
    /// A larger size must fit the target with this much to spare before it is taken.
    public static let upMargin = 1.2
    /// In a stream's first `startWindow` a larger size waits `startUpHold`, not `upHold`
    /// (`quickStart`): the share starts at the size 300 kbit/s carries, and the probes of its
    /// first second find the link. With `upHold` at each step a ball on a flat field on a
    /// 1.5 Mbit/s link went 640×360 → 1280×720 at 6 s → 1920×1080 at 11 s, where GStreamer, told
    /// the rate, sent 1920×1080 from its first frame.
    public static let startWindow: Duration = .seconds(10)
    public static let startUpHold: Duration = .seconds(1)
    /// Whether the start's short hold applies: a stream of its own. (A simulcast layer keeps
    /// `upHold` throughout: its rung is the ladder's, not the link's alone.)
    public var quickStart = false
    private var startedAt: ContinuousClock.Instant?

    public var policy: ScreenSendPolicy
    /// Encoding cost on this machine, microseconds per megapixel of the encoded size (scale +
    /// encode), smoothed; nil until measured.
    public private(set) var cpuMicrosPerMegapixel: Double?
    /// Converting the source to I420 costs the same whatever size is sent: a fixed cost a frame.
    public private(set) var fixedMicros = 0.0
    private var scaleIndex = 0
    /// The next update judges the size afresh (`judgeAfresh`).
    private var afreshPending = false
    /// Until then a larger step is taken without the hold: the limits changed, and the target
    /// that comes with the change (the estimate handed to a camera whose cap was given back) may
    /// arrive a moment after it.
    private var afreshUntil: ContinuousClock.Instant?
    public static let afreshWindow: Duration = .seconds(3)
    private var upCandidate: (index: Int, since: ContinuousClock.Instant)?
    private var cpuBehindSince: ContinuousClock.Instant?
    /// Bits per pixel of the encoder's recent delta frames, smoothed (quick to rise, slow to fall).
    public private(set) var measuredBitsPerPixel: Double?
    /// What the encoder's recent delta frames cost against their share of the target, smoothed.
    public private(set) var overrun: Double = 1
    /// The measured cost is used with this margin, and never under a tenth of the policy's.
    public static let measuredMargin = 1.5

    public init(policy: ScreenSendPolicy = .balanced) {
        self.policy = policy
    }

    /// Records what one frame cost: converting the source (`fixedMicros`, the same at any sent
    /// size) and scaling and encoding it at `width`×`height` (`encodeMicros`). Keeping the two
    /// apart matters: counting the conversion as if it shrank with the picture would make a
    /// smaller size look no cheaper, and the size would fall step after step.
    public mutating func measured(encodeMicros: Int64, fixedMicros fixed: Int64 = 0, width: Int, height: Int) {
        let megapixels = Double(width * height) / 1_000_000
        guard megapixels > 0, encodeMicros > 0 else { return }
        let sample = Double(encodeMicros) / megapixels
        cpuMicrosPerMegapixel = cpuMicrosPerMegapixel.map { $0 * 0.95 + sample * 0.05 } ?? sample
        fixedMicros = fixedMicros * 0.95 + Double(max(0, fixed)) * 0.05
    }

    /// One encoded delta frame of `bytes` at `width`×`height`, whose share of the target was
    /// `budgetBytes` (keyframes cost several frames and come rarely: they are left out). With the
    /// frame's quantizer, the cost counted is the frame's inside the quantizer band
    /// (`FrameQuantizer.costInBand`): a rate-controlled encoder spends what it is given, so a
    /// cheap picture's frames cost their budget at QP 1, and a squeezed one's at QP 52. Without it
    /// the shaper took the budget for the content's price and held a ball on a flat field at
    /// 640×360. The first frames at a new size or after a keyframe (`keyframeSent`) are not
    /// counted: the rate control starts coarse, or pays for the keyframe, and takes a moment.
    public mutating func encoded(
        bytes: Int, width: Int, height: Int, budgetBytes: Int? = nil, quantizer: FrameQuantizer? = nil
    ) {
        let pixels = Double(width * height)
        guard pixels > 0 else { return }
        if let budgetBytes, budgetBytes > 0 {
            var sample = Double(bytes) / Double(budgetBytes)
            // Over its share at a quantizer finer than the band's coarse end, a frame says the
            // rate control had room (it goes coarser on the frames after), not that the content is
            // dear: libvpx's frames at index 10–18, a ball at 1080p, ran over their share for a
            // second when the target fell from 1.4 to 1 Mbit/s, and the size fell to 960×540 at
            // index 2 and came back 5 s later, a keyframe each way.
            if let quantizer, quantizer.step < FrameQuantizer.band(for: quantizer.codec).coarse.step {
                sample = min(sample, 1)
            }
            overrun = overrun * 0.8 + sample * 0.2
        }
        if width != measuredWidth || height != measuredHeight {
            if measuredWidth > 0, measuredHeight > 0 {
                let carried = Self.perPixelCarried(from: Double(measuredWidth * measuredHeight), to: pixels)
                steadyBandBitsPerPixel = steadyBandBitsPerPixel.map { $0 * carried }
                if !steadySettled { steadyFromUnsettled = true }
            }
            (measuredWidth, measuredHeight, framesAtSize) = (width, height, 0)
        }
        measuredBitsPerPixel = Self.smoothed(measuredBitsPerPixel, Double(bytes * 8) / pixels)
        framesAtSize += 1
        // Without a quantizer (an encoder that does not say one, a simulcast layer) the size is
        // judged by what the frames spent, as it always was.
        guard let quantizer else { return }
        let band = quantizer.costInBand(bytes: bytes) * 8 / pixels
        let settled = framesAtSize > Self.settlingFrames
        // After a size step, the frame rate takes the unsettled frames while nothing better has
        // come (`steadyFromUnsettled`); a balanced share's, from its first frame.
        let balanced = policy != .detail
        guard settled || steadyFromUnsettled || (balanced && !steadySettled) else { return }
        // The frame rate's measure: a balanced share's frames counted at the band's middle or
        // coarser (`FrameQuantizer.middle`), a detail share's inside the band as the size's.
        let forRate =
            balanced ? quantizer.cost(bytes: bytes, notFinerThan: .middle(for: quantizer.codec)) * 8 / pixels : band
        steadyBandBitsPerPixel =
            steadyBandBitsPerPixel.map { $0 * (1 - Self.steadyWeight) + forRate * Self.steadyWeight } ?? forRate
        guard settled else { return }
        (steadySettled, steadyFromUnsettled) = (true, false)
        bandBitsPerPixel = Self.smoothed(bandBitsPerPixel, band)
    }

    /// A settled frame has been measured.
    private var steadySettled = false
    /// A size step came before any settled frame: until one comes, the frame rate takes the new
    /// size's unsettled frames (the size still waits for settled ones). The start's second
    /// keyframe, a second in, leaves a share no settled frame before its first step up, and the
    /// rate took what 640×360 spent a pixel, over the policy's figure: VP8 at 1280×720 on
    /// 1.1 Mbit/s ran at 19 fps for a second, where its frames then carried 30. A balanced share's
    /// frame rate takes them from its first frame; a detail share's only after a step: it starts at
    /// 1 fps, leaves the estimate unfilled and so probes the link (taking its first cheap frames it
    /// ran at 11 fps at once, filled the start rate, and never probed).
    private var steadyFromUnsettled = false

    /// What a pixel's cost measured at one size is taken for at another, until the new size has
    /// measured its own: a frame's bits grow about as the pixels to the power `pixelExponent`, so
    /// a pixel of a larger picture costs less (`(from / to)^(1 − pixelExponent)`; 0.75 is on the
    /// careful side: text grows nearly with the pixels, a ball on a flat field far less). Taken as
    /// the same per pixel, a ball's cost at 640×360 on a 1.3 Mbit/s target (x264 at QP 14: about
    /// 0.05 bit a pixel in the band) held the frame rate at 1440×810 to 20 fps for the second a new
    /// size's measure waits out, and Chromium decoded 5 frames fewer there; at 1440×810 the same
    /// ball then cost about 0.006 (817 kbit/s at 29 fps and QP 11). Smaller: a pixel a little dearer.
    static func perPixelCarried(from: Double, to: Double) -> Double {
        guard from > 0, to > 0 else { return 1 }
        return pow(from / to, 1 - Self.pixelExponent)
    }
    public static let pixelExponent = 0.75

    /// Quick to rise, slow to fall.
    private static func smoothed(_ previous: Double?, _ sample: Double) -> Double {
        guard let previous else { return sample }
        let weight = sample > previous ? 0.5 : 0.1
        return previous * (1 - weight) + sample * weight
    }

    /// Bits per pixel of the recent delta frames counted inside the quantizer band, smoothed:
    /// what the size is judged by. The frame rate takes it only where it is less than what the
    /// frames spent (`rateBitsPerPixel`): a detail share at 1080p on 900 kbit/s runs at QP 60,
    /// and taken at its cost in the band it would send 2 fps and leave most of its target unspent.
    public private(set) var bandBitsPerPixel: Double?

    /// The same cost, smoothed alike both ways over about ten frames: what the frame rate takes.
    /// The size needs the quick rise (a wrong size is a new encoder and a keyframe); the frame rate
    /// does not, and with it one dear frame among cheap ones took the rate down at once: a ball at
    /// 1080p on VP8 at 1.1 Mbit/s, its band cost wandering 0.0125–0.02 bit a pixel frame to frame,
    /// fell to 22–25 fps for half a second several times a run, 7–9 frames each, where the
    /// frames' cost over any third of a second carried 30.
    ///
    /// Where a balanced share's frame rate settles: its frames counted
    /// as they would cost at the quantizer band's middle (H.264 QP 30, VP8 index 60) when they are
    /// finer than that. Counted inside the band as the size is, a frame that spent its share at a
    /// quantizer in the band's finer half took the rate down by the rate's margin each time (the
    /// next frames got larger shares, and spent them), until the frames sat at the band's fine end:
    /// VP8 at 640×360 on 274 kbit/s at index 37 sent 19–24 fps for its first two seconds (13 frames
    /// skipped, no transport-wide feedback to raise the target sooner). A detail share keeps the
    /// band's fine end: it gives frame rate first. The size still takes the band whole, and waits
    /// for settled frames.
    public private(set) var steadyBandBitsPerPixel: Double?
    public static let steadyWeight = 0.1

    /// A keyframe went out: the frames after it are left out of the measure too (a constant
    /// bitrate encoder pays for a keyframe with coarse frames after it: libvpx runs at its
    /// coarsest for a second, which said nothing about the picture).
    public mutating func keyframeSent() {
        framesAtSize = 0
    }

    /// Delta frames at a new size, or after a keyframe, left out of the measure: a second at 30 fps
    /// (with 10, x264's first frames at 640×360 on 260 kbit/s, fine while its buffer was full,
    /// made a ball look cheap enough for 1080p, where it then ran at QP 52).
    public static let settlingFrames = 30
    private var measuredWidth = 0, measuredHeight = 0, framesAtSize = 0

    /// What one pixel of a frame costs at this policy: its figure, or less when the content has
    /// shown it is cheaper.
    public var bitsPerPixel: Double {
        if overrun > 1.2 { return policy.bitsPerPixel * min(overrun, 4) }
        guard let measured = bandBitsPerPixel ?? measuredBitsPerPixel else { return policy.bitsPerPixel }
        return min(policy.bitsPerPixel, max(measured * Self.measuredMargin, policy.bitsPerPixel / 10))
    }

    /// What one pixel costs when choosing the frame rate at a size already taken: the measured
    /// cost with a smaller margin (`rateMargin`). The size needs the wide margin (a wrong size is a
    /// new encoder and a keyframe); a frame rate costs nothing to change, and with the wide margin
    /// a detail share sent two thirds of its target (and under half on cheap content), which reads
    /// as an application-limited sender, so the estimate was never raised and the frames stayed few.
    /// What frames spent, or less when they were finer than the quantizer band: libvpx sent a ball
    /// at 1080p at index 2 and 18 fps, each frame spending its whole share; at the band's cost the
    /// frames are more and each coarser. (Never more: a detail share at QP 60 keeps its frames.)
    /// Measured at another size than `width`×`height` (the first frame at a new size is not yet
    /// encoded when its rate is chosen), carried to it (`perPixelCarried`).
    public func rateBitsPerPixel(width: Int, height: Int) -> Double {
        if overrun > 1.2 { return policy.bitsPerPixel * min(overrun, 4) }
        guard let spent = measuredBitsPerPixel else { return policy.bitsPerPixel }
        let carried =
            measuredWidth > 0 && measuredHeight > 0
            ? Self.perPixelCarried(from: Double(measuredWidth * measuredHeight), to: Double(width * height)) : 1
        let measured = min(spent, steadyBandBitsPerPixel ?? spent) * carried
        return min(policy.bitsPerPixel, max(measured * Self.rateMargin, policy.bitsPerPixel / 10))
    }
    public static let rateMargin = 1.1

    /// The limits changed (a camera's cap beside a screen given back when the share stops): the
    /// steps are fractions of the fitted size, and the old step was chosen under the old limits.
    /// The next update takes the size the target and the machine carry then, at once, and for
    /// `afreshWindow` a larger one without the hold — nothing about the link changed, only what
    /// it is asked. (A source that changes size keeps its step: the same fraction of the picture.)
    public mutating func judgeAfresh() {
        afreshPending = true
    }

    /// The policy changed: its best shape is taken at once (no hold).
    public mutating func setPolicy(_ policy: ScreenSendPolicy) {
        guard policy != self.policy else { return }
        self.policy = policy
        scaleIndex = 0
        upCandidate = nil
    }

    public mutating func update(
        now: ContinuousClock.Instant, sourceWidth: Int, sourceHeight: Int, targetBitrate: Int,
        maxFrameRate: Int = ScreenSendPolicy.maxFrameRate
    ) -> Decision {
        let ceiling = max(1, min(maxFrameRate, ScreenSendPolicy.maxFrameRate))
        let started = startedAt ?? now
        startedAt = started
        let hold = quickStart && now - started < Self.startWindow ? Self.startUpHold : Self.upHold
        let (fitWidth, fitHeight) = Self.fit(width: sourceWidth, height: sourceHeight, longSide: policy.maxLongSide)
        if let until = afreshUntil, now >= until { afreshUntil = nil }
        var wanted = wantedIndex(width: fitWidth, height: fitHeight, target: Double(targetBitrate), ceiling: ceiling)
        let linkOnly = wantedIndex(
            width: fitWidth, height: fitHeight, target: Double(targetBitrate), ceiling: ceiling,
            countingCPU: false)
        // The machine wants a smaller size than the link alone would (judged before any hold).
        let machineWantsSmaller = wanted > linkOnly
        if afreshPending {
            // The size the link and the machine carry now, at once, holds waived.
            afreshPending = false
            scaleIndex = wanted
            upCandidate = nil
            cpuBehindSince = nil
            afreshUntil = now + Self.afreshWindow
        } else if wanted > max(linkOnly, scaleIndex) {
            // Only the machine wants smaller: after it has stayed behind for `cpuHold`.
            let since = cpuBehindSince ?? now
            cpuBehindSince = since
            if now - since < Self.cpuHold { wanted = max(linkOnly, scaleIndex) }
        } else {
            cpuBehindSince = nil
        }
        if wanted > scaleIndex {
            scaleIndex = wanted
            upCandidate = nil
        } else if wanted < scaleIndex {
            // Up only when the larger size fits with margin, and has for a while.
            let margin = wantedIndex(
                width: fitWidth, height: fitHeight, target: Double(targetBitrate) / Self.upMargin,
                ceiling: ceiling)
            if margin < scaleIndex {
                if afreshUntil != nil {
                    scaleIndex = margin
                    upCandidate = nil
                } else if let candidate = upCandidate, now - candidate.since >= hold {
                    scaleIndex = max(margin, candidate.index)
                    upCandidate = nil
                } else if upCandidate == nil {
                    upCandidate = (margin, now)
                } else if let candidate = upCandidate, margin > candidate.index {
                    upCandidate = (margin, candidate.since)
                }
            } else {
                upCandidate = nil
            }
        } else {
            upCandidate = nil
        }
        let (width, height) = Self.scaled(width: fitWidth, height: fitHeight, by: Self.scales[scaleIndex])
        let bandwidthRate = min(
            ceiling,
            frameRate(
                width: width, height: height, target: Double(targetBitrate),
                bitsPerPixel: rateBitsPerPixel(width: width, height: height)))
        var rate: Int
        switch policy {
        case .motion: rate = ceiling  // quality gives way first
        case .balanced: rate = max(min(policy.minFrameRate, ceiling), bandwidthRate)
        case .detail: rate = bandwidthRate
        }
        // Smaller or slower than the policy's best: the link's doing, unless the link alone would
        // have allowed more and the machine wants it smaller, when the machine is what holds it
        // back. (A size under what the link allows while a larger one waits out `upHold` is the
        // target's doing: it has not carried the larger one long enough.)
        var limit: SendLimit = .none
        if scaleIndex > linkOnly && machineWantsSmaller {
            limit = .cpu
        } else if scaleIndex > 0 || bandwidthRate < ceiling {
            limit = .bandwidth
        }
        if let cpuRate = cpuFrameRate(width: width, height: height), cpuRate < rate {
            rate = cpuRate
            limit = .cpu
        }
        return Decision(shape: SendShape(width: width, height: height, frameRate: rate), limit: limit)
    }

    /// The frame rate the target carries at this size for this policy's quality.
    private func frameRate(width: Int, height: Int, target: Double, bitsPerPixel: Double? = nil) -> Int {
        let perFrame = Double(width * height) * (bitsPerPixel ?? self.bitsPerPixel)
        return max(1, Int((target / perFrame).rounded(.down)))
    }

    /// Frames per second this machine encodes at this size, using 85% of one frame interval.
    private func cpuFrameRate(width: Int, height: Int) -> Int? {
        guard let cost = cpuMicrosPerMegapixel else { return nil }
        let micros = fixedMicros + cost * Double(width * height) / 1_000_000
        guard micros > 0 else { return nil }
        return max(1, Int((850_000 / micros).rounded(.down)))
    }

    /// The largest step (lowest index) whose frame rate meets the policy, else the smallest size.
    private func wantedIndex(width: Int, height: Int, target: Double, ceiling: Int, countingCPU: Bool = true) -> Int {
        switch policy {
        case .detail:
            return 0
        case .balanced, .motion:
            let floor = min(policy.minFrameRate, ceiling)
            for (index, scale) in Self.scales.enumerated() {
                let (w, h) = Self.scaled(width: width, height: height, by: scale)
                var rate = frameRate(width: w, height: h, target: target)
                if countingCPU, let cpu = cpuFrameRate(width: w, height: h) { rate = min(rate, cpu) }
                if rate >= floor { return index }
            }
            return Self.scales.count - 1
        }
    }

    /// The size inside `longSide`, even in both directions for 4:2:0.
    public static func fit(width: Int, height: Int, longSide: Int) -> (Int, Int) {
        let long = max(width, height)
        guard long > longSide else { return (max(2, width & ~1), max(2, height & ~1)) }
        return scaled(width: width, height: height, by: Double(longSide) / Double(long))
    }

    static func scaled(width: Int, height: Int, by scale: Double) -> (Int, Int) {
        (max(2, Int((Double(width) * scale).rounded()) & ~1), max(2, Int((Double(height) * scale).rounded()) & ~1))
    }
}
