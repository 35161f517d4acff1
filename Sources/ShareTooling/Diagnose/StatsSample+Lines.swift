import StatsLine

/// A line of this build's commands, as diagnose sees it: each command's `StatsLine` type mapped
/// onto the one sample a report and a plot read.
extension StatsSample {
    /// A WHIP share's second. Before its encoder runs (no codec yet) the video fields are
    /// defaults, not figures, and are left missing; so is the connection before it starts (state
    /// new, no pair).
    public init(_ line: ShareStatsLine) {
        self.init(t: line.t)
        let video = line.video
        if !video.codec.isEmpty {
            codec = video.codec
            encoder = video.encoder.isEmpty ? nil : video.encoder
            width = video.width
            height = video.height
            fpsEncoded = video.fpsEncoded
            fpsSent = video.fpsSent
            bitrateKbps = Double(video.bitrateKbps)
            targetKbps = Double(video.targetKbps)
            limitedBy = video.limitedBy
            keyframes = video.keyframes
            keyframeRequests = video.keyframeRequests
            pliReceived = video.pliReceived
            nacksReceived = video.nacksReceived
        }
        let connection = line.connection
        if connection.pair != nil || connection.state != "new" {
            connections = [
                Connection(
                    peer: nil, state: connection.state, pair: connection.pair, relayed: connection.relayed,
                    rttMs: connection.rttMs, fractionLost: connection.fractionLost)
            ]
        }
        watchdog = line.watchdog.map(Watchdog.init)
    }

    /// A room call's second: one connection per participant (by name), and our screen as sent
    /// to them — its size, rate, codec and limit as the first participant gets it, bitrate,
    /// target and keyframes summed over all (each has an encoder of its own). A call line says
    /// nothing of encoding rates, keyframes asked for or loss.
    public init(_ line: CallStatsLine) {
        self.init(t: line.t)
        connections = line.peers.map { peer in
            Connection(
                peer: peer.name, state: peer.connection.state, pair: peer.connection.pair,
                relayed: peer.connection.pair.map { $0.contains("relay") }, rttMs: peer.connection.rttMs,
                fractionLost: nil)
        }
        let sends = line.peers.compactMap(\.video)
        if let first = sends.first {
            codec = first.codecName
            encoder = first.encoder
            width = first.width
            height = first.height
            fpsSent = first.fps
            bitrateKbps = Double(sends.reduce(0) { $0 + $1.bitrateKbps })
            let targets = sends.compactMap(\.targetKbps)
            targetKbps = targets.isEmpty ? nil : Double(targets.reduce(0, +))
            let limits = sends.compactMap(\.limitedBy)
            limitedBy = limits.first { $0 != "none" } ?? limits.first
            keyframes = sends.reduce(0) { $0 + $1.keyframes }
        }
        watchdog = line.watchdog.map(Watchdog.init)
    }
}

extension StatsSample {
    /// A Janus watcher's second: what arrived from the publisher and was decoded, over the one
    /// connection to Janus. A watcher encodes nothing and runs no watchdog.
    public init(_ line: JanusWatchStatsLine) {
        self.init(t: line.t)
        let video = line.video
        codec = video.codec
        if video.width > 0, video.height > 0 {
            width = video.width
            height = video.height
        }
        if line.connection.pair != nil || line.connection.state != "new" {
            connections = [
                Connection(
                    peer: "Janus", state: line.connection.state, pair: line.connection.pair,
                    relayed: line.connection.pair.map { $0.contains("relay") }, rttMs: nil, fractionLost: nil)
            ]
        }
        var received = Received(publisher: line.publisher)
        received.framesDecoded = video.framesDecoded
        received.keyframesDecoded = video.keyframesDecoded
        received.fps = video.fps
        received.bitrateKbps = Double(video.bitrateKbps)
        received.packetsLost = video.packetsLost
        received.nacksSent = video.nacksSent
        received.plisSent = video.plisSent
        received.layer = video.layer
        received.queuingDelayMs = video.queuingDelayMs
        received.audioFramesDecoded = line.audio.framesDecoded
        self.received = received
    }
}

extension StatsSample.Watchdog {
    /// `recent` and `lastStep`, each step once.
    init(_ status: WatchdogStatus) {
        var steps = status.recent.map(StatsSample.Step.init)
        if let last = status.lastStep.map(StatsSample.Step.init), !steps.contains(last) { steps.append(last) }
        self.init(state: status.state, rung: status.rung, steps: steps)
    }
}

extension StatsSample.Step {
    init(_ step: WatchdogStatus.Step) {
        self.init(number: step.number, t: step.t, action: step.action, subject: step.subject, reason: step.reason)
    }
}
