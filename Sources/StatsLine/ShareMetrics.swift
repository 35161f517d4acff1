/// A share's figures for Prometheus (`--metrics-listen`), kept across its WHIP sessions: each
/// second's `ShareStatsLine` goes in, the exposition text comes out. Pure; the tests feed it lines.
///
/// Counters only ever rise. The stats line's counts start again at zero with each WHIP session (a
/// reconnect) and each new encoder section, so a count lower than the last one seen is taken as a
/// fresh start and added whole, as Prometheus's own `rate()` treats a counter reset.
public struct ShareMetrics: Sendable {
    /// A monotonic total built from a count that may start again.
    struct Counter: Sendable, Equatable {
        private(set) var total = 0
        private var last: Int?

        mutating func observe(_ count: Int) {
            let count = max(0, count)
            if let last, count >= last {
                total += count - last
            } else {
                total += count  // the first count, or one that started again
            }
            last = count
        }

        mutating func add(_ n: Int) { total += max(0, n) }
    }

    /// What the build is: `sharectl_build_info`'s labels (version, commit, the C libraries).
    public var buildLabels: [(String, String)]

    private var counters: [String: Counter] = [:]
    private var watchdogSteps: [String: Int] = [:]
    private var lastWatchdogStep = 0
    private var lastWatchdogSteps = 0
    private var cameraDevice: String?
    private(set) var cameraSwitches = 0
    private(set) var reconnects = 0
    private var captureRestarts = 0
    private var last: ShareStatsLine?
    /// The share's health as `/healthz` says it (`ServiceHealth` in the command decides it).
    public var healthy: Bool?

    public init(buildLabels: [(String, String)] = []) {
        self.buildLabels = buildLabels
    }

    /// The counts the stats line carries, by metric name (without `sharectl_` and `_total`).
    private static let lineCounts: [(String, String, @Sendable (ShareStatsLine) -> Int?)] = [
        ("video_frames_captured", "Frames the capture delivered to the encoder.", { $0.video.framesCaptured }),
        ("video_frames_encoded", "Frames the screen's encoder made.", { $0.video.framesEncoded }),
        ("video_frames_sent", "Frames sent (the screen, or the camera alone).", { $0.video.framesSent }),
        ("video_keyframes", "Keyframes made.", { $0.video.keyframes }),
        ("video_keyframe_requests", "Keyframes the receiver asked for (PLI and FIR).", { $0.video.keyframeRequests }),
        ("video_nacks_received", "NACK feedback messages received.", { $0.video.nacksReceived }),
        ("video_rtx_packets_sent", "Retransmissions sent on the RTX stream.", { $0.video.rtxSent }),
        ("video_packets_sent", "Video RTP packets sent.", { $0.video.packetsSent }),
        ("video_encode_errors", "Frames the encoder failed on.", { $0.video.encodeErrors }),
        ("camera_frames_sent", "Camera frames sent beside the screen.", { $0.camera?.framesSent }),
        ("audio_frames_sent", "Opus frames sent.", { $0.audio?.framesSent }),
        ("connection_sent_bytes", "Bytes sent on the connection.", { $0.connection.bytesSent }),
        ("connection_received_bytes", "Bytes received on the connection.", { $0.connection.bytesReceived })
    ]

    /// One second of the share.
    public mutating func observe(_ line: ShareStatsLine) {
        for (name, _, read) in Self.lineCounts {
            if let count = read(line) { counters[name, default: Counter()].observe(count) }
        }
        if let watchdog = line.watchdog {
            // A new watchdog (a new session) numbers its steps from 1 again.
            if watchdog.steps < lastWatchdogSteps { lastWatchdogStep = 0 }
            lastWatchdogSteps = watchdog.steps
            for step in watchdog.recent where step.number > lastWatchdogStep {
                watchdogSteps[step.action, default: 0] += 1
                lastWatchdogStep = step.number
            }
        }
        if let device = line.camera?.device, !device.isEmpty {
            if let before = cameraDevice, before != device { cameraSwitches += 1 }
            cameraDevice = device
        }
        last = line
    }

    /// The share published its `session`-th WHIP session: every one after the first is a reconnect.
    public mutating func published(session: Int) {
        reconnects = max(reconnects, session - 1)
    }

    /// The capture's own count of restarts (the watchdog's and its own).
    public mutating func captureRestarted(total: Int) {
        captureRestarts = max(captureRestarts, total)
    }

    /// The exposition text (Prometheus 0.0.4).
    public var exposition: String {
        var out = PrometheusText()
        out.family(
            "sharectl_build_info", .gauge, help: "The build of sharectl and its C libraries.",
            [.init(1, labels: buildLabels)])
        for (name, help, _) in Self.lineCounts {
            guard let counter = counters[name] else { continue }
            out.family("sharectl_\(name)_total", .counter, help: help, Double(counter.total))
        }
        out.family(
            "sharectl_watchdog_steps_total", .counter, help: "Steps the screen watchdog took, by rung.",
            watchdogSteps.sorted { $0.key < $1.key }.map { .init(Double($0.value), labels: [("rung", $0.key)]) })
        out.family(
            "sharectl_reconnects_total", .counter, help: "WHIP sessions published again after a lost connection.",
            Double(reconnects))
        out.family(
            "sharectl_capture_restarts_total", .counter, help: "Times the screen capture was started again.",
            Double(captureRestarts))
        out.family(
            "sharectl_camera_switches_total", .counter, help: "Times the camera director moved to another camera.",
            Double(cameraSwitches))
        if let healthy {
            out.family("sharectl_healthy", .gauge, help: "1 while media flows (as /healthz says).", healthy ? 1 : 0)
        }
        guard let line = last else { return out.text }
        let video = line.video
        out.family("sharectl_video_frames_per_second", .gauge, help: "Frames sent over the last second.", video.fpsSent)
        out.family(
            "sharectl_video_encoded_frames_per_second", .gauge, help: "Frames encoded over the last second.",
            video.fpsEncoded)
        out.family(
            "sharectl_video_sent_bits_per_second", .gauge, help: "Video bits sent over the last second.",
            Double(video.bitrateKbps) * 1000)
        out.family(
            "sharectl_video_target_bits_per_second", .gauge, help: "The encoder's target from congestion control.",
            Double(video.targetKbps) * 1000)
        out.family("sharectl_video_width_pixels", .gauge, help: "The width sent.", Double(video.width))
        out.family("sharectl_video_height_pixels", .gauge, help: "The height sent.", Double(video.height))
        if !video.policy.isEmpty {
            out.family(
                "sharectl_send_policy", .gauge, help: "The send policy in force (1 on its label).",
                [.init(1, labels: [("policy", video.policy)])])
        }
        out.family(
            "sharectl_video_limited", .gauge, help: "What holds the video back (1 on its label: none, bandwidth, cpu).",
            [.init(1, labels: [("by", video.limitedBy.isEmpty ? "none" : video.limitedBy)])])
        out.family(
            "sharectl_connection_state", .gauge, help: "The connection's state (1 on its label).",
            [.init(1, labels: [("state", line.connection.state)])])
        out.family(
            "sharectl_round_trip_seconds", .gauge, help: "The round trip from RTCP.",
            line.connection.rttMs.map { $0 / 1000 })
        out.family(
            "sharectl_loss_ratio", .gauge, help: "The fraction of packets the receiver reports lost.",
            line.connection.fractionLost)
        if let camera = line.camera {
            out.family(
                "sharectl_camera_frames_per_second", .gauge, help: "Camera frames sent over the last second.",
                camera.fpsSent)
            out.family(
                "sharectl_camera_sent_bits_per_second", .gauge, help: "Camera bits sent over the last second.",
                Double(camera.bitrateKbps) * 1000)
        }
        if let audio = line.audio {
            out.family(
                "sharectl_audio_level_dbfs", .gauge, help: "The peak level of the audio sent (dBFS).", audio.levelDbfs)
        }
        return out.text
    }
}
