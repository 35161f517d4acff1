import Foundation
import ScreenWatchdog
import CallMedia
import RoomProtocol
import StatsLine

/// A room call's figures of one second, per participant: what we decode of them (screen, camera,
/// audio), what we send them, their connection, and what they say they decode of us — the call
/// line of docs/stats.schema.json, defined once in `StatsLine`. `jsonLine` is the `--stats-json`
/// line of `sharectl share --room` and `sharectl watch`.
public typealias CallStatistics = CallStatsLine

extension CallStatsLine.View {
    /// ", repair: 12 NACKs, 11 by RTX, 1 frame given up" once anything was asked for.
    var repairText: String {
        guard nacksSent > 0 || framesGivenUp > 0 else { return "" }
        return
            ", repair: \(nacksSent) NACKs, \(rtxRecovered) by RTX, \(framesGivenUp) frame\(framesGivenUp == 1 ? "" : "s") given up"
    }
}

extension CallStatsLine {
    /// While we share, the screen's headline (as a WHIP share prints it), then one status line per
    /// participant, and one for the call when something is wrong.
    public var statusLines: [String] {
        var lines: [String] = []
        if let headline = screenHeadline { lines.append(headline) }
        if reconnecting { lines.append("Reconnecting…") }
        if peers.isEmpty {
            lines.append(
                "Waiting for others to join (\(signalling == "up" ? "in the room" : "signalling \(signalling)"))")
        }
        for peer in peers {
            var parts: [String] = []
            if let s = peer.screen {
                parts.append(
                    s.framesDecoded > 0
                        ? "screen \(s.width)×\(s.height) at \(Int(s.fps.rounded())) fps, \(s.framesDecoded) decoded, \(s.freezes) freezes\(s.stalled ? ", stalled" : "")\(s.repairText)"
                        : "screen shared, nothing decoded yet\(s.stalled ? " (stalled)" : "")")
            }
            if let c = peer.camera, c.framesDecoded > 0 {
                parts.append("camera \(c.width)×\(c.height) at \(Int(c.fps.rounded())) fps")
            }
            if let a = peer.audio, a.samplesDecoded > 0 {
                parts.append(
                    a.muted
                        ? "audio muted"
                        : "audio \(Int(a.levelDbfs.rounded())) dBFS\(a.noSound ? ", no sound" : a.speaking ? ", speaking" : "")"
                )
            }
            if let v = peer.video { parts.append("sent screen \(v.framesSent) frames") }
            if let c = peer.cameraSent, c.framesSent > 0 {
                parts.append(
                    "sent camera \(c.width)×\(c.height)\(c.capped == true ? " (capped beside the screen)" : "")")
            }
            if let s = peer.audioSent, s.silent { parts.append(SilenceMonitor.message) }
            parts.append(peer.connection.state)
            lines.append("\(peer.name): " + parts.joined(separator: ", "))
        }
        let microphone =
            (muted == true ? ["muted"] : speaking ? ["speaking"] : []) + (audioProcessing.map { [$0] } ?? [])
        if !microphone.isEmpty { lines.append("Microphone: " + microphone.joined(separator: ", ")) }
        // The watchdog on the second line, as in a WHIP share (its notices are printed when they come).
        if let watchdog { lines.insert(watchdog.statusText(now: t), at: min(1, lines.count)) }
        return lines
    }

    /// `Screen: 1280×720 at 30 fps, 1.4 Mbit/s, detail, direct (VP8 libvpx) to bea` (the send
    /// policy once the encoder says it), or with several
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
        let paths = Set(
            sends.map { peer, _ in
                peer.connection.state != "connected"
                    ? peer.connection.state
                    : (peer.connection.pair?.contains("relay") ?? false) ? "relayed" : "direct"
            })
        let path = paths.sorted().joined(separator: " and ")
        let codec = [first.codecName, first.encoder].compactMap { $0 }.joined(separator: " ")
        let total = ShareStats.rate(kbps: sends.reduce(0) { $0 + $1.1.bitrateKbps })
        let policy = first.policy.map { $0.isEmpty ? "" : ", \($0)" } ?? ""
        if sends.count == 1 {
            return "Screen: \(picture(first)), \(total)\(policy), \(path) (\(codec)) to \(sends[0].0.name)"
        }
        let pictures = sends.map { picture($0.1) }
        let each =
            Set(pictures).count == 1
            ? pictures[0] : zip(sends, pictures).map { "\($0.0.name) \($1)" }.joined(separator: "; ")
        return "Screen to \(sends.count) people: \(each); \(total) in all\(policy), \(path) (\(codec))"
    }

    /// The line as written: the time to the millisecond, rates and levels to a tenth, each
    /// peer's `report` from its `theirView`, and where call audio goes now.
    public var written: CallStatsLine {
        var line = self
        line.t = (t * 1000).rounded() / 1000
        for index in line.peers.indices {
            line.peers[index].screen?.fps.roundToTenth()
            line.peers[index].camera?.fps.roundToTenth()
            line.peers[index].audio?.levelDbfs.roundToTenth()
            line.peers[index].video?.fps.roundToTenth()
            line.peers[index].cameraSent?.fps.roundToTenth()
            line.peers[index].audioSent?.levelDbfs.roundToTenth()
            line.peers[index].report = line.peers[index].theirView.map(Report.init)
        }
        line.audioOutput = AudioReceiver.output
        line.audioOutputShortReads = AudioOutput.shared.mixerCounters.shortReads
        return line
    }

    /// The `--stats-json` line (`written`, encoded). A number JSON cannot hold (NaN, an
    /// infinity) is written as the nearest one it can and `clamped` is told which field it was.
    public func jsonLine(clamped: (StatsLineError) -> Void = { _ in }) -> String {
        let (json, error) = StatsLineJSON.encodeClamping(written)
        if let error { clamped(error) }
        return json
    }
}

private extension Double {
    mutating func roundToTenth() { self = (self * 10).rounded() / 10 }
}
