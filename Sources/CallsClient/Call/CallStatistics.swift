import Foundation
import ScreenWatchdog
import CallMedia
import RoomProtocol

/// A room call's figures of one second, per participant: what we decode of them (screen, camera,
/// audio), what we send them, their connection, and what they say they decode of us.
/// `jsonLine` is the `--stats-json` line of `sharectl share --room` and `sharectl watch`.
public struct CallStatistics: Sendable {
    public struct View: Sendable {
        public var framesDecoded = 0
        public var width = 0
        public var height = 0
        public var fps = 0.0
        public var freezes = 0
        public var stalled = false
        public var mid: String?
        public var packets = 0
        public var framesDropped = 0
        public var keyframesDecoded = 0
        public var decodeErrors = 0
        public var plisSent = 0
        public var codec: String?
        /// Frames a wedged decoder swallowed (fault injection) and frames assembled for the decoder.
        public var framesSwallowed = 0
        public var framesAssembled = 0
        /// Repair: NACKs sent, packets RTX brought back, frames given up (a packet never came).
        public var nacksSent = 0
        public var rtxRecovered = 0
        public var framesGivenUp = 0

        /// ", repair: 12 NACKs, 11 by RTX, 1 frame given up" once anything was asked for.
        var repairText: String {
            guard nacksSent > 0 || framesGivenUp > 0 else { return "" }
            return ", repair: \(nacksSent) NACKs, \(rtxRecovered) by RTX, \(framesGivenUp) frame\(framesGivenUp == 1 ? "" : "s") given up"
        }
    }

    public struct Audio: Sendable {
        public var samplesDecoded = 0
        public var framesConcealed = 0
        /// The loudest 20 ms frame of the last second.
        public var levelDbfs = -120.0
        /// Heard above silence within the last three seconds.
        public var hearing = false
    }

    public struct Sent: Sendable {
        public var framesSent = 0
        public var framesEncoded = 0
        public var width = 0
        public var height = 0
        public var keyframes = 0
        public var codec: String?
        /// Our camera: the encoder's target and limit, and whether it is capped beside our screen.
        public var targetKbps: Int?
        public var maxKbps: Int?
        public var capped: Bool?
        /// The section it goes on (a rebuild moves it to another) and encoders made for it.
        public var mid: String?
        public var encodersMade = 0
        /// Our screen to them: the negotiated codec ("VP8"), frames and kbit/s sent over the last
        /// second, what holds it back (`none`, `bandwidth`, `cpu`) and the send policy.
        public var codecName: String?
        public var fps = 0.0
        public var bitrateKbps = 0
        public var limitedBy: String?
        public var policy: String?
    }

    public struct AudioSent: Sendable {
        public var framesSent = 0
        public var levelDbfs = -120.0
        public var framesDropped = 0
        public var source = ""
        /// "Your microphone isn't picking anything up" (under −90 dBFS for 5 s while sending).
        public var silent = false
    }

    public struct Connection: Sendable {
        public var state = "new"
        public var pair: String?
        public var rttMs: Double?
    }

    public struct TheirView: Sendable {
        public var screenFramesDecoded: Int?
        public var screenStalled: Bool?
        public var cameraFramesDecoded: Int?
        public var hearsUs = false
    }

    public struct Peer: Sendable {
        public var id: String
        public var name: String
        public var sharing = false
        public var screen: View?
        public var camera: View?
        public var audio: Audio?
        public var video: Sent?
        public var cameraSent: Sent?
        public var audioSent: AudioSent?
        public var connection = Connection()
        public var theirView: TheirView?

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    public var t = 0.0
    public var id: String?
    public var signalling = "down"
    public var reconnecting = false
    /// How many times "Reconnecting…" was said.
    public var reconnectingShown = 0
    public var sharing = false
    /// `share` messages sent (on and off).
    public var sharesSent = 0
    public var welcomes = 0
    public var resumes = 0
    public var peers: [Peer] = []
    /// Names of participants who left.
    public var left: [String] = []
    /// Connections made again after one failed.
    public var connectionsRenewed = 0
    /// The screen watchdog while we share (`watchdog.state`, `.rung`, `.lastStep`, `.recent`, `.notices`).
    public var watchdog: WatchdogStatus?
    /// Faults injected and in force (drills and tests): `decoder-wedge NAME`, `capture-stall`, …
    public var faults: [String] = []

    public init() {}

    /// While we share, the screen's headline (as a WHIP share prints it), then one status line per
    /// participant, and one for the call when something is wrong.
    public var statusLines: [String] {
        var lines: [String] = []
        if let headline = screenHeadline { lines.append(headline) }
        if reconnecting { lines.append("Reconnecting…") }
        if peers.isEmpty { lines.append("Waiting for others to join (\(signalling == "up" ? "in the room" : "signalling \(signalling)"))") }
        for peer in peers {
            var parts: [String] = []
            if let s = peer.screen {
                parts.append(s.framesDecoded > 0
                             ? "screen \(s.width)×\(s.height) at \(Int(s.fps.rounded())) fps, \(s.framesDecoded) decoded, \(s.freezes) freezes\(s.stalled ? ", stalled" : "")\(s.repairText)"
                             : "screen shared, nothing decoded yet\(s.stalled ? " (stalled)" : "")")
            }
            if let c = peer.camera, c.framesDecoded > 0 {
                parts.append("camera \(c.width)×\(c.height) at \(Int(c.fps.rounded())) fps")
            }
            if let a = peer.audio, a.samplesDecoded > 0 {
                parts.append("audio \(Int(a.levelDbfs.rounded())) dBFS")
            }
            if let v = peer.video { parts.append("sent screen \(v.framesSent) frames") }
            if let c = peer.cameraSent, c.framesSent > 0 {
                parts.append("sent camera \(c.width)×\(c.height)\(c.capped == true ? " (capped beside the screen)" : "")")
            }
            if let s = peer.audioSent, s.silent { parts.append(SilenceMonitor.message) }
            parts.append(peer.connection.state)
            lines.append("\(peer.name): " + parts.joined(separator: ", "))
        }
        // The watchdog on the second line, as in a WHIP share (its notices are printed when they come).
        if let watchdog { lines.insert(watchdog.statusText(now: t), at: min(1, lines.count)) }
        return lines
    }

    /// `Screen: 1280×720 at 30 fps, 1.4 Mbit/s, direct (VP8 libvpx) to bea`, or with several
    /// people, what each gets when it differs: `Screen to 2 people: bea 1280×720 at 30 fps; cy
    /// 640×360 at 15 fps, limited by bandwidth; 2.1 Mbit/s in all, direct (VP8 libvpx)`. Nil
    /// when we share to nobody.
    var screenHeadline: String? {
        let sends = peers.compactMap { peer in peer.video.map { (peer, $0) } }
        guard sharing, let first = sends.first?.1 else { return nil }
        func picture(_ v: Sent) -> String {
            let limit = v.limitedBy.map { $0 == "none" || $0.isEmpty ? "" : ", limited by \($0)" } ?? ""
            return "\(v.width)×\(v.height) at \(Int(v.fps.rounded())) fps\(limit)"
        }
        let paths = Set(sends.map { peer, _ in
            peer.connection.state != "connected" ? peer.connection.state
                : (peer.connection.pair?.contains("relay") ?? false) ? "relayed" : "direct"
        })
        let path = paths.sorted().joined(separator: " and ")
        let codec = [first.codecName, first.codec].compactMap { $0 }.joined(separator: " ")
        let total = ShareStats.rate(kbps: sends.reduce(0) { $0 + $1.1.bitrateKbps })
        if sends.count == 1 {
            return "Screen: \(picture(first)), \(total), \(path) (\(codec)) to \(sends[0].0.name)"
        }
        let pictures = sends.map { picture($0.1) }
        let each = Set(pictures).count == 1 ? pictures[0] : zip(sends, pictures).map { "\($0.0.name) \($1)" }.joined(separator: "; ")
        return "Screen to \(sends.count) people: \(each); \(total) in all, \(path) (\(codec))"
    }

    public func jsonLine() -> String {
        func view(_ v: View?) -> Any {
            guard let v else { return NSNull() }
            var o: [String: Any] = ["framesDecoded": v.framesDecoded, "width": v.width, "height": v.height,
                                    "fps": (v.fps * 10).rounded() / 10, "freezes": v.freezes, "stalled": v.stalled,
                                    "packets": v.packets, "framesDropped": v.framesDropped, "keyframesDecoded": v.keyframesDecoded,
                                    "decodeErrors": v.decodeErrors, "plisSent": v.plisSent, "codec": v.codec ?? NSNull(),
                                    "framesSwallowed": v.framesSwallowed, "framesAssembled": v.framesAssembled,
                                    "nacksSent": v.nacksSent, "rtxRecovered": v.rtxRecovered, "framesGivenUp": v.framesGivenUp]
            if let mid = v.mid { o["mid"] = mid }
            return o
        }
        func sent(_ s: Sent?) -> Any {
            guard let s else { return NSNull() }
            var o: [String: Any] = ["framesSent": s.framesSent, "framesEncoded": s.framesEncoded, "width": s.width,
                                    "height": s.height, "keyframes": s.keyframes, "encoder": s.codec ?? NSNull(),
                                    "mid": s.mid ?? NSNull(), "encodersMade": s.encodersMade,
                                    "fps": (s.fps * 10).rounded() / 10, "bitrateKbps": s.bitrateKbps,
                                    "limitedBy": s.limitedBy ?? NSNull(), "policy": s.policy ?? NSNull(),
                                    "codecName": s.codecName ?? NSNull()]
            if let target = s.targetKbps { o["targetKbps"] = target }
            if let most = s.maxKbps { o["maxKbps"] = most }
            if let capped = s.capped { o["capped"] = capped }
            return o
        }
        let peerObjects: [[String: Any]] = peers.map { p in
            var o: [String: Any] = [
                "id": p.id, "name": p.name, "sharing": p.sharing,
                "screen": view(p.screen), "camera": view(p.camera),
                "audio": p.audio.map { ["samplesDecoded": $0.samplesDecoded, "framesConcealed": $0.framesConcealed,
                                        "levelDbfs": ($0.levelDbfs * 10).rounded() / 10, "hearing": $0.hearing] as [String: Any] } ?? NSNull(),
                "video": sent(p.video), "cameraSent": sent(p.cameraSent),
                "audioSent": p.audioSent.map { ["framesSent": $0.framesSent, "levelDbfs": ($0.levelDbfs * 10).rounded() / 10,
                                                "framesDropped": $0.framesDropped, "source": $0.source, "silent": $0.silent] as [String: Any] } ?? NSNull(),
                "connection": ["state": p.connection.state, "pair": p.connection.pair ?? NSNull(),
                               "rttMs": p.connection.rttMs ?? NSNull()] as [String: Any],
            ]
            if let t = p.theirView {
                o["theirView"] = ["screenFramesDecoded": t.screenFramesDecoded ?? NSNull(), "screenStalled": t.screenStalled ?? NSNull(),
                                  "cameraFramesDecoded": t.cameraFramesDecoded ?? NSNull(), "hearsUs": t.hearsUs] as [String: Any]
                // What that peer last reported about our screen (the receiver-driven ladder's input).
                o["report"] = ["screenStalled": t.screenStalled ?? NSNull(), "framesDecoded": t.screenFramesDecoded ?? NSNull()] as [String: Any]
            }
            return o
        }
        var object: [String: Any] = [
            "t": (t * 1000).rounded() / 1000, "id": id ?? NSNull(), "signalling": signalling, "reconnecting": reconnecting,
            "reconnectingShown": reconnectingShown, "sharing": sharing, "sharesSent": sharesSent, "welcomes": welcomes,
            "resumes": resumes, "peers": peerObjects, "left": left, "audioOutput": AudioReceiver.output,
            "audioOutputShortReads": AudioOutput.shared.mixerCounters.shortReads,
            "faults": faults, "connectionsRenewed": connectionsRenewed,
        ]
        if let watchdog, let data = try? JSONEncoder().encode(watchdog),
           let value = try? JSONSerialization.jsonObject(with: data) {
            object["watchdog"] = value
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
