import Foundation
import ScreenWatchdog
import RoomProtocol
import StatsLine

/// One second of a share, as the status line says it and `--stats-json` writes it: the share
/// line of docs/stats.schema.json, defined once in `StatsLine`.
public typealias ShareStats = ShareStatsLine

extension ShareStatsLine {
    /// `Screen: 1920×1080 at 8 fps, limited by bandwidth, 1.2 Mbit/s, direct (H264 x264)` and a
    /// second line of counters.
    public var statusLines: [String] {
        let rate = Self.rate(kbps: video.bitrateKbps)
        let path = connection.state != "connected" ? connection.state : connection.relayed ? "relayed" : "direct"
        let limit = video.limitedBy == "none" || video.limitedBy.isEmpty ? "" : "limited by \(video.limitedBy), "
        let first =
            "\(video.content == "camera" ? "Camera" : "Screen"): \(video.width)×\(video.height) at \(Int(video.fpsSent.rounded())) fps, \(limit)\(rate), "
            + "\(path) (\(video.codec) \(video.encoder))"
        var second = String(
            format: "  encoded %.0f fps, sent %.0f fps, keyframes %d made / %d asked",
            video.fpsEncoded, video.fpsSent, video.keyframes, video.keyframeRequests)
        if !video.policy.isEmpty { second += ", \(video.policy), target \(Self.rate(kbps: video.targetKbps))" }
        if let rtt = connection.rttMs { second += String(format: ", rtt %.0f ms", rtt) }
        if let loss = connection.fractionLost { second += String(format: ", loss %.1f%%", loss * 100) }
        if video.nacksReceived > 0 { second += ", NACKs \(video.nacksReceived), RTX \(video.rtxSent)" }
        if let audio { second += String(format: ", audio %.0f dBFS", audio.levelDbfs) }
        if let watchdog { second += ", " + watchdog.statusText(now: t) }
        var lines = [first, second]
        // `  layers: h 1280×720 at 30 fps 1.1 Mbit/s, m 640×360 at 30 fps 420 kbit/s, l off`
        if let layers = video.layers, !layers.isEmpty {
            lines.append(
                "  layers: "
                    + layers.map { layer in
                        layer.active
                            ? "\(layer.rid) \(layer.width)×\(layer.height) at \(Int(layer.fpsSent.rounded())) fps \(Self.rate(kbps: layer.bitrateKbps))"
                            : "\(layer.rid) off"
                    }.joined(separator: ", "))
        }
        guard let camera, video.content == "screen", camera.framesSent > 0 || !camera.device.isEmpty else {
            return lines
        }
        // `Camera: 480×360 at 30 fps, 420 kbit/s, capped beside the screen (Synthetic cam)`
        let cap = camera.capped ? ", capped beside the screen" : ""
        let device = camera.device.isEmpty ? "" : " (\(camera.device))"
        return lines + [
            "Camera: \(camera.width)×\(camera.height) at \(Int(camera.fpsSent.rounded())) fps, "
                + "\(Self.rate(kbps: camera.bitrateKbps))\(cap)\(device)"
        ]
    }

    static func rate(kbps: Int) -> String {
        kbps >= 1000 ? String(format: "%.1f Mbit/s", Double(kbps) / 1000) : "\(kbps) kbit/s"
    }

    /// The `--stats-json` line. A number JSON cannot hold (NaN, an infinity) is written as the
    /// nearest one it can and `clamped` is told which field it was.
    public func jsonLine(clamped: (StatsLineError) -> Void = { _ in }) -> String {
        let (json, error) = StatsLineJSON.encodeClamping(self)
        if let error { clamped(error) }
        return json
    }
}
