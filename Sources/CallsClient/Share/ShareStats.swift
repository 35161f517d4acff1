import Foundation
import ScreenWatchdog

/// One second of a share, as the status line says it and `--stats-json` writes it (one JSON
/// object per line; dotted names like `video.framesEncoded` are nested objects).
public struct ShareStats: Sendable, Encodable {
    public struct Video: Sendable, Encodable {
        public var codec = ""
        public var encoder = ""
        public var width = 0
        public var height = 0
        public var framesCaptured = 0
        public var framesEncoded = 0
        public var framesSent = 0
        public var keyframes = 0
        public var keyframeRequests = 0
        public var pliReceived = 0
        public var firReceived = 0
        public var nacksReceived = 0
        public var rtxSent = 0
        public var packetsSent = 0
        public var bitrateKbps = 0
        public var targetKbps = 0
        public var fpsEncoded = 0.0
        public var fpsSent = 0.0
        public var encodeErrors = 0
    }

    public struct Audio: Sendable, Encodable {
        public var codec = "opus"
        public var framesSent = 0
        public var framesDropped = 0
        public var levelDbfs = -120.0
        public var bitrateKbps = 0
    }

    public struct Connection: Sendable, Encodable {
        public var state = "new"
        public var ice = "new"
        public var pair: String?
        public var relayed = false
        public var srtpProfile: String?
        public var rttMs: Double?
        public var fractionLost: Double?
        public var remb: Int?
        public var bytesSent = 0
        public var bytesReceived = 0
        public var rtcpReceived = 0
        public var droppedDatagrams = 0
    }

    /// Seconds since the share started.
    public var t: Double = 0
    public var video = Video()
    public var audio: Audio?
    public var connection = Connection()
    /// What the screen watchdog is doing (`watchdog.state`, `watchdog.rung`, `watchdog.lastStep`),
    /// when one runs.
    public var watchdog: WatchdogStatus?

    public init() {}

    /// `Screen: 1280×720 at 30 fps, 2.1 Mbit/s, direct (H264 x264)` and a second line of counters.
    public var statusLines: [String] {
        let rate = video.bitrateKbps >= 1000 ? String(format: "%.1f Mbit/s", Double(video.bitrateKbps) / 1000)
                                             : "\(video.bitrateKbps) kbit/s"
        let path = connection.state != "connected" ? connection.state : connection.relayed ? "relayed" : "direct"
        let first = "Screen: \(video.width)×\(video.height) at \(Int(video.fpsSent.rounded())) fps, \(rate), \(path) (\(video.codec) \(video.encoder))"
        var second = String(format: "  encoded %.0f fps, sent %.0f fps, keyframes %d made / %d asked",
                            video.fpsEncoded, video.fpsSent, video.keyframes, video.keyframeRequests)
        if let rtt = connection.rttMs { second += String(format: ", rtt %.0f ms", rtt) }
        if let loss = connection.fractionLost { second += String(format: ", loss %.1f%%", loss * 100) }
        if video.nacksReceived > 0 { second += ", NACKs \(video.nacksReceived), RTX \(video.rtxSent)" }
        if let audio { second += String(format: ", audio %.0f dBFS", audio.levelDbfs) }
        if let watchdog { second += ", " + watchdog.statusText(now: t) }
        return [first, second]
    }

    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
