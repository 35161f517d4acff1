import Foundation
import ScreenWatchdog
import RoomProtocol

/// One second of a share, as the status line says it and `--stats-json` writes it (one JSON
/// object per line; dotted names like `video.framesEncoded` are nested objects).
public struct ShareStats: Sendable, Encodable {
    public struct Video: Sendable, Encodable {
        /// What this first video section carries: "screen", or "camera" when the camera goes alone.
        public var content = "screen"
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
        /// The send policy (balanced, detail, motion), the frame rate it allows now, and what
        /// holds the stream back: none, bandwidth or cpu.
        public var policy = ""
        public var fpsAllowed = 0
        public var limitedBy = "none"
        public var framesSkipped = 0
        public var framesRepeated = 0
        public var encodersMade = 0
        public var encodeMs = 0.0
        /// Keyframes sent in answer to PLI/FIR, and the slowest answer (request to last packet out).
        public var keyframeResponses = 0
        public var keyframeResponseMaxMs: Double?
    }

    /// The camera sent beside the screen (or alone): its section's figures, whether it is capped
    /// for the screen beside it, and which camera the director is using (`device`, filled in by
    /// whoever runs the director).
    public struct Camera: Sendable, Encodable {
        public var device = ""
        public var codec = ""
        public var encoder = ""
        public var width = 0
        public var height = 0
        public var framesCaptured = 0
        public var framesEncoded = 0
        public var framesSent = 0
        public var keyframes = 0
        public var fpsSent = 0.0
        public var bitrateKbps = 0
        public var targetKbps = 0
        /// The encoder's limits now: 500 kbit/s and a long side for 360 lines while capped.
        public var maxKbps = 0
        public var maxLongSide = 0
        public var capped = false

        public init() {}
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
    public var camera: Camera?
    public var audio: Audio?
    public var connection = Connection()
    /// What the screen watchdog is doing (`watchdog.state`, `watchdog.rung`, `watchdog.lastStep`),
    /// when one runs.
    public var watchdog: WatchdogStatus?

    public init() {}

    /// `Screen: 1920×1080 at 8 fps, limited by bandwidth, 1.2 Mbit/s, direct (H264 x264)` and a
    /// second line of counters.
    public var statusLines: [String] {
        let rate = Self.rate(kbps: video.bitrateKbps)
        let path = connection.state != "connected" ? connection.state : connection.relayed ? "relayed" : "direct"
        let limit = video.limitedBy == "none" || video.limitedBy.isEmpty ? "" : "limited by \(video.limitedBy), "
        let first = "\(video.content == "camera" ? "Camera" : "Screen"): \(video.width)×\(video.height) at \(Int(video.fpsSent.rounded())) fps, \(limit)\(rate), "
            + "\(path) (\(video.codec) \(video.encoder))"
        var second = String(format: "  encoded %.0f fps, sent %.0f fps, keyframes %d made / %d asked",
                            video.fpsEncoded, video.fpsSent, video.keyframes, video.keyframeRequests)
        if !video.policy.isEmpty { second += ", \(video.policy), target \(Self.rate(kbps: video.targetKbps))" }
        if let rtt = connection.rttMs { second += String(format: ", rtt %.0f ms", rtt) }
        if let loss = connection.fractionLost { second += String(format: ", loss %.1f%%", loss * 100) }
        if video.nacksReceived > 0 { second += ", NACKs \(video.nacksReceived), RTX \(video.rtxSent)" }
        if let audio { second += String(format: ", audio %.0f dBFS", audio.levelDbfs) }
        if let watchdog { second += ", " + watchdog.statusText(now: t) }
        guard let camera, video.content == "screen", camera.framesSent > 0 || !camera.device.isEmpty else {
            return [first, second]
        }
        // `Camera: 480×360 at 30 fps, 420 kbit/s, capped beside the screen (Synthetic cam)`
        let cap = camera.capped ? ", capped beside the screen" : ""
        let device = camera.device.isEmpty ? "" : " (\(camera.device))"
        return [first, second, "Camera: \(camera.width)×\(camera.height) at \(Int(camera.fpsSent.rounded())) fps, "
                + "\(Self.rate(kbps: camera.bitrateKbps))\(cap)\(device)"]
    }

    static func rate(kbps: Int) -> String {
        kbps >= 1000 ? String(format: "%.1f Mbit/s", Double(kbps) / 1000) : "\(kbps) kbit/s"
    }

    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
