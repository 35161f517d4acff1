import Foundation

/// A share's life as an SVG drawing, written by hand: three panels on one time axis (frame rate
/// encoded and sent; bitrate and target; RTT) and a numbered vertical mark for each watchdog or
/// ladder step, listed under the panels with its time and reason.
public struct ShareTimelinePlot: Sendable {
    public var diagnosis: ShareDiagnosis

    public init(_ diagnosis: ShareDiagnosis) { self.diagnosis = diagnosis }

    struct Series {
        var name: String
        var color: String
        var dashed: Bool
        var points: [(t: Double, value: Double?)]
    }

    struct Panel {
        var title: String
        var unit: String
        var series: [Series]
        var floor: Double
    }

    static let width = 1000.0
    static let left = 80.0
    static let right = 30.0
    static let panelHeight = 160.0
    static let panelGap = 56.0
    static let top = 70.0
    static let listedSteps = 24

    var panels: [Panel] {
        let samples = diagnosis.samples
        return [
            Panel(
                title: "Frame rate", unit: "fps",
                series: [
                    Series(
                        name: "encoded", color: "#1f77b4", dashed: false, points: samples.map { ($0.t, $0.fpsEncoded) }),
                    Series(name: "sent", color: "#ff7f0e", dashed: true, points: samples.map { ($0.t, $0.fpsSent) })
                ], floor: 30),
            Panel(
                title: "Bitrate", unit: "kbit/s",
                series: [
                    Series(
                        name: "bitrate", color: "#2ca02c", dashed: false, points: samples.map { ($0.t, $0.bitrateKbps) }
                    ),
                    Series(
                        name: "target", color: "#555555", dashed: true, points: samples.map { ($0.t, $0.targetKbps) })
                ], floor: 500),
            Panel(
                title: "Round-trip time", unit: "ms",
                series: [
                    Series(name: "RTT", color: "#9467bd", dashed: false, points: samples.map { ($0.t, $0.rttMs) })
                ], floor: 10)
        ]
    }

    public var svg: String {
        let panels = self.panels
        let steps = diagnosis.steps
        let plotWidth = Self.width - Self.left - Self.right
        let listed = min(steps.count, Self.listedSteps)
        let panelsBottom = Self.top + Double(panels.count) * (Self.panelHeight + Self.panelGap)
        let height =
            panelsBottom + 30 + Double(listed + (steps.count > listed ? 1 : 0)) * 16 + (steps.isEmpty ? 16 : 0) + 20
        let t0 = diagnosis.start
        let t1 = max(diagnosis.end, t0 + 1)
        func x(_ t: Double) -> Double { Self.left + (t - t0) / (t1 - t0) * plotWidth }

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(Self.width)) \(Int(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Self.left)" y="28" font-size="17" font-weight="bold">\(Self.escape("A share's life: \(URL(fileURLWithPath: diagnosis.source).lastPathComponent)"))</text>
            <text x="\(Self.left)" y="48" fill="#444">\(Self.escape(subtitle))</text>

            """
        let timeTicks = Self.ticks(from: t0, to: t1, count: 10)
        for (index, panel) in panels.enumerated() {
            let y0 = Self.top + Double(index) * (Self.panelHeight + Self.panelGap) + 20
            let values = panel.series.flatMap { $0.points.compactMap(\.value) }
            let top = Self.niceCeiling(max(panel.floor, (values.max() ?? 0) * 1.1))
            func y(_ v: Double) -> Double { y0 + Self.panelHeight - v / top * Self.panelHeight }
            out += "<g>\n"
            out +=
                "<text x=\"\(Self.left)\" y=\"\(f(y0 - 8))\" font-weight=\"bold\">\(Self.escape(panel.title)) (\(panel.unit))</text>\n"
            // Legend, right-aligned above the panel.
            var legendX = Self.width - Self.right
            for series in panel.series.reversed() {
                let label = series.name
                let textWidth = Double(label.count) * 7 + 8
                legendX -= textWidth
                out += "<text x=\"\(f(legendX))\" y=\"\(f(y0 - 8))\">\(Self.escape(label))</text>\n"
                legendX -= 26
                out +=
                    "<line x1=\"\(f(legendX))\" y1=\"\(f(y0 - 12))\" x2=\"\(f(legendX + 20))\" y2=\"\(f(y0 - 12))\" stroke=\"\(series.color)\" stroke-width=\"2\"\(series.dashed ? " stroke-dasharray=\"6 3\"" : "")/>\n"
                legendX -= 12
            }
            out +=
                "<rect x=\"\(Self.left)\" y=\"\(f(y0))\" width=\"\(plotWidth)\" height=\"\(Self.panelHeight)\" fill=\"#fafafa\" stroke=\"#999\"/>\n"
            for tick in Self.ticks(from: 0, to: top, count: 4) {
                out +=
                    "<line x1=\"\(Self.left)\" y1=\"\(f(y(tick)))\" x2=\"\(f(Self.left + plotWidth))\" y2=\"\(f(y(tick)))\" stroke=\"#e3e3e3\"/>\n"
                out +=
                    "<text x=\"\(f(Self.left - 6))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\" fill=\"#444\">\(Self.label(tick))</text>\n"
            }
            for tick in timeTicks {
                out +=
                    "<line x1=\"\(f(x(tick)))\" y1=\"\(f(y0 + Self.panelHeight))\" x2=\"\(f(x(tick)))\" y2=\"\(f(y0 + Self.panelHeight + 4))\" stroke=\"#999\"/>\n"
                out +=
                    "<text x=\"\(f(x(tick)))\" y=\"\(f(y0 + Self.panelHeight + 17))\" text-anchor=\"middle\" fill=\"#444\">\(Self.label(tick)) s</text>\n"
            }
            if values.isEmpty {
                out +=
                    "<text x=\"\(f(Self.left + plotWidth / 2))\" y=\"\(f(y0 + Self.panelHeight / 2))\" text-anchor=\"middle\" fill=\"#888\">not in the statistics</text>\n"
            }
            for series in panel.series {
                for run in Self.runs(series.points) {
                    let points = run.map { "\(f(x($0.t))),\(f(y($0.value)))" }.joined(separator: " ")
                    if run.count == 1 {
                        out +=
                            "<circle cx=\"\(f(x(run[0].t)))\" cy=\"\(f(y(run[0].value)))\" r=\"2\" fill=\"\(series.color)\"/>\n"
                    } else {
                        out +=
                            "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(series.color)\" stroke-width=\"1.8\"\(series.dashed ? " stroke-dasharray=\"6 3\"" : "")/>\n"
                    }
                }
            }
            for (number, step) in steps.enumerated() {
                let sx = x(min(max(step.t, t0), t1))
                out +=
                    "<line x1=\"\(f(sx))\" y1=\"\(f(y0))\" x2=\"\(f(sx))\" y2=\"\(f(y0 + Self.panelHeight))\" stroke=\"\(Self.color(step.action))\" stroke-width=\"1.2\" stroke-dasharray=\"3 2\"/>\n"
                if index == 0 {
                    out +=
                        "<text x=\"\(f(sx + 2))\" y=\"\(f(y0 + 12 + Double(number % 3) * 12))\" fill=\"\(Self.color(step.action))\" font-size=\"11\">\(number + 1) \(Self.escape(step.action))</text>\n"
                }
            }
            out += "</g>\n"
        }
        var listY = panelsBottom + 20
        out += "<text x=\"\(Self.left)\" y=\"\(f(listY))\" font-weight=\"bold\">Watchdog and ladder steps</text>\n"
        if steps.isEmpty {
            listY += 16
            out +=
                "<text x=\"\(Self.left)\" y=\"\(f(listY))\" fill=\"#444\">none\(diagnosis.samples.contains { $0.watchdog != nil } ? "" : " (the statistics carry no watchdog)")</text>\n"
        }
        for (number, step) in steps.prefix(listed).enumerated() {
            listY += 16
            let subject = step.subject.map { " \($0)" } ?? ""
            let text = "\(number + 1). t=\(ShareDiagnosis.fixed(step.t, 1)) s  \(step.action)\(subject): \(step.reason)"
            out +=
                "<text x=\"\(Self.left)\" y=\"\(f(listY))\" fill=\"\(Self.color(step.action))\">\(Self.escape(Self.clip(text, 140)))</text>\n"
        }
        if steps.count > listed {
            listY += 16
            out +=
                "<text x=\"\(Self.left)\" y=\"\(f(listY))\" fill=\"#444\">… and \(steps.count - listed) more in report.txt</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    var subtitle: String {
        let samples = diagnosis.samples
        var parts = ["\(ShareDiagnosis.fixed(diagnosis.end - diagnosis.start, 0)) s", "\(samples.count) samples"]
        if let video = samples.last(where: { $0.codec != nil }) {
            parts.append([video.codec, video.encoder].compactMap { $0 }.joined(separator: " "))
            if let w = video.width, let h = video.height { parts.append("\(w)×\(h)") }
        }
        parts.append("\(diagnosis.steps.count) watchdog steps")
        return parts.joined(separator: " · ")
    }

    /// Stretches of consecutive points that have a value (a missing value breaks the line).
    static func runs(_ points: [(t: Double, value: Double?)]) -> [[(t: Double, value: Double)]] {
        var runs: [[(t: Double, value: Double)]] = []
        var current: [(t: Double, value: Double)] = []
        for point in points {
            if let value = point.value, value.isFinite {
                current.append((point.t, value))
            } else if !current.isEmpty {
                runs.append(current)
                current = []
            }
        }
        if !current.isEmpty { runs.append(current) }
        return runs
    }

    static func color(_ action: String) -> String {
        switch action {
        case "recovered": "#2a9d2a"
        case "held", "notice": "#888888"
        case "giveUp", "shareAgain", "newTransceiver", "rebuild": "#c0392b"
        default: "#d35400"
        }
    }

    /// 1, 2 or 5 times a power of ten, at or above `value`, so the axis ends on a round figure.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 2.5, 4, 5, 10] where factor * power >= value { return factor * power }
        return 10 * power
    }

    static func ticks(from low: Double, to high: Double, count: Int) -> [Double] {
        let span = high - low
        guard span > 0 else { return [low] }
        let raw = span / Double(count)
        let power = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power
        var tick = ceil(low / step) * step
        var ticks: [Double] = []
        while tick <= high + step * 1e-9 {
            ticks.append(tick)
            tick += step
        }
        return ticks
    }

    static func label(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : ShareDiagnosis.fixed(value, 1)
    }

    static func clip(_ text: String, _ length: Int) -> String {
        text.count > length ? String(text.prefix(length - 1)) + "…" : text
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

private func f(_ value: Double) -> String { String(format: "%.1f", value) }
