import Foundation
import ScreenWatchdog

/// What `sharectl diagnose` says about a share, worked out from its statistics: duration, peers,
/// frame rates, bitrate against target, RTT, what limited it, and every watchdog and ladder step
/// with its time and reason.
public struct ShareDiagnosis: Sendable {
    public var source: String
    public var samples: [StatsSample]
    public var notes: [String]
    /// Every watchdog step seen, once each, in time order.
    public var steps: [StatsSample.Step]

    public init(source: String, contents: StatsFile.Contents) {
        self.source = source
        self.samples = contents.samples.sorted { $0.t < $1.t }
        self.notes = contents.notes
        var seen = Set<String>()
        var steps: [StatsSample.Step] = []
        for sample in samples {
            for step in sample.watchdog?.steps ?? [] {
                let key = step.number.map { "#\($0)" } ?? "\(step.t) \(step.action) \(step.subject ?? "")"
                if seen.insert(key).inserted { steps.append(step) }
            }
        }
        self.steps = steps.sorted { ($0.t, $0.number ?? 0) < ($1.t, $1.number ?? 0) }
    }

    public var start: Double { samples.first?.t ?? 0 }
    public var end: Double { samples.last?.t ?? 0 }

    /// min, median and max of the values present, or nil if none.
    public static func spread(_ values: [Double]) -> (min: Double, median: Double, max: Double)? {
        let sorted = values.filter(\.isFinite).sorted()
        guard let first = sorted.first, let last = sorted.last else { return nil }
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return (first, median, last)
    }

    /// The plain-text report.
    public var report: String {
        var lines: [String] = []
        lines.append("sharectl diagnose: \(source)")
        lines.append("")
        let last = samples.last!
        let duration = end - start
        lines.append(
            isWatch
                ? watchHeading
                : "Share: \(Self.fixed(duration, 1)) s of statistics (t \(Self.fixed(start, 1)) to \(Self.fixed(end, 1)) s), \(samples.count) samples"
        )
        let video = samples.last { $0.codec != nil } ?? last
        var format: [String] = []
        if let codec = video.codec { format.append([codec, video.encoder].compactMap { $0 }.joined(separator: " ")) }
        let sizes = Self.distinct(samples.compactMap { s in s.width.flatMap { w in s.height.map { "\(w)×\($0)" } } })
        if !sizes.isEmpty { format.append(sizes.joined(separator: ", then ")) }
        if !format.isEmpty { lines.append("Video: " + format.joined(separator: ", ")) }

        let peers = Self.distinct(samples.flatMap { $0.connections.map { $0.peer ?? $0.pair ?? "unnamed" } })
        lines.append("Peers: \(peers.count)" + (peers.isEmpty ? " (no connection in the statistics)" : ""))
        for peer in peers {
            let connection = samples.reversed().lazy.flatMap(\.connections).first {
                ($0.peer ?? $0.pair ?? "unnamed") == peer
            }
            var detail: [String] = []
            if let state = connection?.state { detail.append("last \(state)") }
            if let relayed = connection?.relayed { detail.append(relayed ? "relayed" : "direct") }
            if let pair = connection?.pair, pair != peer { detail.append(pair) }
            lines.append("  \(peer)" + (detail.isEmpty ? "" : " — " + detail.joined(separator: ", ")))
        }
        lines.append("")
        lines += isWatch ? receivedLines : sentLines
        let states = Dictionary(grouping: samples.flatMap { $0.connections.compactMap(\.state) }, by: { $0 }).mapValues(
            \.count)
        if !states.isEmpty {
            lines.append(
                "Connection states: "
                    + states.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value) samples" }.joined(
                        separator: ", "))
        }
        lines.append("")
        let watchdogSeen = samples.contains { $0.watchdog != nil }
        if !watchdogSeen {
            lines.append(
                isWatch
                    ? "Watchdog: none on a watcher (the publisher's statistics have its steps)"
                    : "Watchdog: not in the statistics (this share ran without it)")
        } else {
            let rungs = Self.distinct(samples.compactMap { $0.watchdog?.rung }.filter { $0 != "none" })
            let final = last.watchdog.map { "\($0.state ?? "?") at \($0.rung ?? "?")" } ?? "?"
            lines.append(
                "Watchdog: \(steps.count) steps; rungs reached: \(rungs.isEmpty ? "none" : rungs.joined(separator: ", ")); at the end \(final)"
            )
            for step in steps {
                let subject = step.subject.map { " \($0)" } ?? ""
                lines.append("  t=\(Self.fixed(step.t, 1)) s  \(step.action)\(subject): \(step.reason)")
            }
            if let gap = Self.missedSteps(samples) { lines.append("  (\(gap))") }
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            lines += notes.map { "  \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A sender's rates against its target, RTT, loss, what limited it, its keyframes.
    var sentLines: [String] {
        let last = samples.last!
        var lines: [String] = []
        lines.append(Self.line("Frame rate encoded", samples.compactMap(\.fpsEncoded), unit: "fps", digits: 1))
        lines.append(Self.line("Frame rate sent", samples.compactMap(\.fpsSent), unit: "fps", digits: 1))
        lines.append(Self.line("Bitrate", samples.compactMap(\.bitrateKbps), unit: "kbit/s", digits: 0))
        lines.append(Self.line("Target", samples.compactMap(\.targetKbps), unit: "kbit/s", digits: 0))
        lines.append(Self.line("RTT", samples.compactMap(\.rttMs), unit: "ms", digits: 1))
        let losses = samples.flatMap { $0.connections.compactMap(\.fractionLost) }
        if let loss = Self.spread(losses) {
            lines.append("Loss: median \(Self.fixed(loss.median * 100, 1))%, worst \(Self.fixed(loss.max * 100, 1))%")
        }
        let limits = samples.compactMap(\.limitedBy)
        if limits.isEmpty {
            lines.append("Limited by: not in the statistics")
        } else {
            let counts = Dictionary(grouping: limits, by: { $0 }).mapValues(\.count).sorted {
                ($1.value, $0.key) < ($0.value, $1.key)
            }
            lines.append("Limited by: " + counts.map { "\($0.key) \($0.value) s" }.joined(separator: ", "))
        }
        if let keyframes = last.keyframes {
            var text = "Keyframes: \(keyframes) made"
            if let asked = last.keyframeRequests { text += ", \(asked) asked for" }
            if let pli = last.pliReceived { text += "; PLI \(pli)" }
            if let nacks = last.nacksReceived { text += ", NACKs \(nacks)" }
            lines.append(text)
        }
        return lines
    }

    /// Steps numbered past what the file shows (more in one second than `recent` keeps).
    static func missedSteps(_ samples: [StatsSample]) -> String? {
        let numbers = Set(samples.flatMap { $0.watchdog?.steps.compactMap(\.number) ?? [] })
        guard let top = numbers.max() else { return nil }
        let missing = top - numbers.count
        return missing > 0 ? "\(missing) steps are numbered but not in the file" : nil
    }

    static func line(_ title: String, _ values: [Double], unit: String, digits: Int) -> String {
        guard let spread = spread(values) else { return "\(title): not in the statistics" }
        return
            "\(title): min \(fixed(spread.min, digits)), median \(fixed(spread.median, digits)), max \(fixed(spread.max, digits)) \(unit)"
    }

    static func distinct(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
