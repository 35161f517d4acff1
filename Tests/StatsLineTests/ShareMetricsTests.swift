import Testing

@testable import StatsLine

/// `--metrics-listen`'s figures from the share's stats lines: counters that only rise across WHIP
/// sessions, steps and switches counted once, and the text format's escaping.
@Suite struct ShareMetricsTests {
    func line(sent: Int, nacks: Int = 0, device: String? = nil, steps: [(Int, String)] = []) -> ShareStatsLine {
        var line = ShareStatsLine()
        line.video.framesSent = sent
        line.video.framesEncoded = sent
        line.video.nacksReceived = nacks
        line.video.policy = "detail"
        line.video.limitedBy = "bandwidth"
        line.video.bitrateKbps = 1200
        line.connection.state = "connected"
        line.connection.rttMs = 25
        if let device {
            line.camera = ShareStatsLine.Camera()
            line.camera?.device = device
        }
        if !steps.isEmpty {
            line.watchdog = WatchdogStatus(
                state: "recovering", rung: steps.last!.1, steps: steps.last!.0,
                recent: steps.map { .init(number: $0.0, t: 1, action: $0.1, subject: nil, reason: "stalled") })
        }
        return line
    }

    /// The value of the sample `name` (with `labels`, if given) in the text.
    func value(_ text: String, _ name: String) -> Double? {
        for row in text.split(separator: "\n") where !row.hasPrefix("#") {
            let parts = row.split(separator: " ")
            if parts.count == 2, parts[0] == name { return Double(parts[1]) }
        }
        return nil
    }

    @Test func countersRiseAcrossSessionsWhoseCountsStartAgain() {
        var metrics = ShareMetrics()
        metrics.observe(line(sent: 100, nacks: 3))
        metrics.observe(line(sent: 160, nacks: 5))
        // A reconnect: the new session counts from zero.
        metrics.published(session: 2)
        metrics.observe(line(sent: 20, nacks: 1))
        metrics.observe(line(sent: 50, nacks: 1))
        let text = metrics.exposition
        #expect(value(text, "sharectl_video_frames_sent_total") == 210)
        #expect(value(text, "sharectl_video_nacks_received_total") == 6)
        #expect(value(text, "sharectl_reconnects_total") == 1)
    }

    @Test func watchdogStepsAndCameraSwitchesAreCountedOnce() {
        var metrics = ShareMetrics()
        metrics.observe(line(sent: 10, device: "Front", steps: [(1, "keyframe")]))
        metrics.observe(line(sent: 20, device: "Front", steps: [(1, "keyframe"), (2, "freshEncoder")]))
        metrics.observe(line(sent: 30, device: "Spare", steps: [(1, "keyframe"), (2, "freshEncoder")]))
        metrics.observe(line(sent: 40, device: "Front", steps: [(1, "keyframe")]))  // a new watchdog
        let text = metrics.exposition
        #expect(text.contains("sharectl_watchdog_steps_total{rung=\"keyframe\"} 2"))
        #expect(text.contains("sharectl_watchdog_steps_total{rung=\"freshEncoder\"} 1"))
        #expect(value(text, "sharectl_camera_switches_total") == 2)
    }

    @Test func gaugesFollowTheLastLine() {
        var metrics = ShareMetrics(buildLabels: [("version", "0.1.0"), ("commit", "abc")])
        metrics.healthy = false
        metrics.observe(line(sent: 10))
        let text = metrics.exposition
        #expect(text.contains("sharectl_build_info{version=\"0.1.0\",commit=\"abc\"} 1"))
        #expect(value(text, "sharectl_video_sent_bits_per_second") == 1_200_000)
        #expect(value(text, "sharectl_round_trip_seconds") == 0.025)
        #expect(text.contains("sharectl_send_policy{policy=\"detail\"} 1"))
        #expect(text.contains("sharectl_video_limited{by=\"bandwidth\"} 1"))
        #expect(value(text, "sharectl_healthy") == 0)
        #expect(text.contains("# TYPE sharectl_video_frames_sent_total counter"))
        #expect(text.contains("# TYPE sharectl_video_frames_per_second gauge"))
        #expect(text.hasSuffix("\n"))
    }

    @Test func labelValuesAndHelpAreEscaped() {
        var text = PrometheusText()
        text.family("x", .gauge, help: "a \\ b\nc", [.init(1.5, labels: [("l", "q\"u\\o\nte")])])
        #expect(text.text == "# HELP x a \\\\ b\\nc\n# TYPE x gauge\nx{l=\"q\\\"u\\\\o\\nte\"} 1.5\n")
        #expect(PrometheusText.number(.nan) == "NaN")
        #expect(PrometheusText.number(-.infinity) == "-Inf")
        #expect(PrometheusText.number(42) == "42")
    }

    @Test func nothingObservedYetStillHasTheBuildAndTotals() {
        let text = ShareMetrics(buildLabels: [("version", "0.1.0")]).exposition
        #expect(text.contains("sharectl_build_info{version=\"0.1.0\"} 1"))
        #expect(value(text, "sharectl_reconnects_total") == 0)
        #expect(!text.contains("sharectl_video_frames_per_second"))
    }
}
