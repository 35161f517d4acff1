/// The receiving side of a report: a watcher's file (`watch --janus --stats-json`), whose lines
/// say what arrived from the publisher and was decoded here rather than what was encoded and sent.
extension ShareDiagnosis {
    /// Every sample is a watcher's.
    public var isWatch: Bool { samples.allSatisfy { $0.received != nil } }

    /// A stretch in which the decoded count stood still after the first frame: from the last
    /// sample that moved to the one that moved again (nil: still standing at the end).
    public struct Standstill: Sendable, Equatable {
        public var from: Double
        public var to: Double?

        public init(from: Double, to: Double?) {
            self.from = from
            self.to = to
        }
    }

    /// Stretches of at least `minimum` seconds without a new decoded frame, after the first one.
    public var standstills: [Standstill] { Self.standstills(samples, minimum: 2) }

    static func standstills(_ samples: [StatsSample], minimum: Double) -> [Standstill] {
        var found: [Standstill] = []
        var lastMoved: (t: Double, frames: Int)?
        for sample in samples {
            guard let frames = sample.received?.framesDecoded else { continue }
            guard let moved = lastMoved else {
                if frames > 0 { lastMoved = (sample.t, frames) }
                continue
            }
            if frames != moved.frames {
                if sample.t - moved.t >= minimum { found.append(Standstill(from: moved.t, to: sample.t)) }
                lastMoved = (sample.t, frames)
            }
        }
        if let moved = lastMoved, let end = samples.last?.t, end - moved.t >= minimum {
            found.append(Standstill(from: moved.t, to: nil))
        }
        return found
    }

    var watchHeading: String {
        let publisher = samples.last?.received?.publisher ?? "?"
        return
            "Watch of \(publisher) through Janus: \(Self.fixed(end - start, 1)) s of statistics (t \(Self.fixed(start, 1)) "
            + "to \(Self.fixed(end, 1)) s), \(samples.count) samples"
    }

    /// Rates, what was lost and asked again, where the picture stood still, the layers asked for.
    var receivedLines: [String] {
        let received = samples.compactMap(\.received)
        guard let last = received.last else { return [] }
        var lines: [String] = []
        lines.append(Self.line("Frame rate decoded", received.map(\.fps), unit: "fps", digits: 1))
        lines.append(Self.line("Bitrate received", received.map(\.bitrateKbps), unit: "kbit/s", digits: 0))
        lines.append(
            "Frames decoded: \(last.framesDecoded) (\(last.keyframesDecoded) keyframes); packets lost "
                + "\(last.packetsLost), NACKs sent \(last.nacksSent), PLIs sent \(last.plisSent)")
        if let first = samples.first(where: { ($0.received?.framesDecoded ?? 0) > 0 }) {
            lines.append("First frame: by t \(Self.fixed(first.t, 1)) s")
            let stood = standstills
            if stood.isEmpty {
                lines.append("Stood still: never for 2 s or more after the first frame")
            } else {
                let spans = stood.map { s in
                    "t \(Self.fixed(s.from, 1))–"
                        + (s.to.map { "\(Self.fixed($0, 1)) s" } ?? "the end (still standing)")
                }
                let times = stood.count == 1 ? "once" : "\(stood.count) times"
                lines.append("Stood still \(times) for 2 s or more: " + spans.joined(separator: ", "))
            }
        } else {
            lines.append("First frame: none decoded")
        }
        var layers: [(t: Double, layer: Int)] = []
        for sample in samples {
            guard let layer = sample.received?.layer, layers.last?.layer != layer else { continue }
            layers.append((sample.t, layer))
        }
        if !layers.isEmpty {
            lines.append(
                "Layer asked: " + layers.map { "\($0.layer) from t \(Self.fixed($0.t, 1)) s" }.joined(separator: ", ")
                    + " (0 the smallest)")
        }
        let delays = received.compactMap(\.queuingDelayMs)
        if !delays.isEmpty { lines.append(Self.line("Queuing delay", delays, unit: "ms", digits: 0)) }
        lines.append("Audio: \(last.audioFramesDecoded) frames decoded")
        return lines
    }
}
