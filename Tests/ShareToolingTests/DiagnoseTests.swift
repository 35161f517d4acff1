import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import ShareCore
import ShareTooling
import StatsLine
import Testing
@testable import ScreenWatchdog

/// `sharectl diagnose`'s reading, report and plot: on the stats file of a real share to aiortc
/// (Fixtures/README.md), on that file with the watchdog's own status written into each line as
/// the share will write it, and on broken files.
@Suite struct DiagnoseTests {
    static func fixture() throws -> String {
        let url = try #require(
            Bundle.module.url(forResource: "share-aiortc-h264", withExtension: "jsonl", subdirectory: "Fixtures"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test func aRealShareIsSummarised() throws {
        let contents = try StatsFile.parse(Self.fixture(), path: "share.jsonl")
        #expect(contents.samples.count == 40)
        #expect(contents.notes.isEmpty)
        let diagnosis = ShareDiagnosis(source: "share.jsonl", contents: contents)
        let report = diagnosis.report
        #expect(report.contains("Share: 39.0 s of statistics (t 1.0 to 40.0 s), 40 samples"))
        #expect(report.contains("Video: H264 x264, 1280×720"))
        #expect(
            report.contains("Peers: 1\n  127.0.0.1:57540 host <-> 127.0.0.1:41128 host udp — last connected, direct"))
        let fps = try #require(ShareDiagnosis.spread(contents.samples.compactMap(\.fpsSent)))
        #expect(report.contains(String(format: "Frame rate sent: min %.1f, median %.1f", fps.min, fps.median)))
        #expect(fps.median > 29 && fps.median < 31, "the share ran at 30 fps")
        #expect(report.contains("Target: min 2500, median 2500, max 2500 kbit/s"))
        #expect(report.contains("RTT: min "))
        #expect(report.contains("Limited by: not in the statistics"))
        #expect(report.contains("Watchdog: not in the statistics"))
        let svg = ShareTimelinePlot(diagnosis).svg
        try Self.expectWellFormed(svg)
        #expect(
            svg.contains("Frame rate (fps)") && svg.contains("Bitrate (kbit/s)") && svg.contains("Round-trip time (ms)")
        )
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 5, "encoded, sent, bitrate, target, RTT")
    }

    @Test func medianOfEvenAndOddCounts() {
        #expect(ShareDiagnosis.spread([3, 1, 2])!.median == 2)
        #expect(ShareDiagnosis.spread([4, 1, 2, 3])!.median == 2.5)
        #expect(ShareDiagnosis.spread([]) == nil)
    }

    /// The watchdog's published status, encoded as `ShareStats` writes it, set into the real
    /// share's lines second by second while the ladders run a stall: the steps come out of the
    /// file once each, with their times and reasons, and are marked on the plot.
    @Test func watchdogStepsInTheStatsAreListedAndMarked() async throws {
        let lines = try Self.fixture().split(separator: "\n").map(String.init)
        let probe = StallProbe()
        let start = ContinuousClock.now
        let watchdog = ScreenWatchdog(
            probe: probe, effector: NoEffector(), logger: .disabled, clock: ContinuousClock(), origin: start)
        var composed: [String] = []
        let encoder = JSONEncoder()
        for (index, line) in lines.enumerated() {
            let second = index + 1
            probe.set(second: second, stalled: (10...30).contains(second))
            await watchdog.tick(now: start + .seconds(second))
            var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            object["watchdog"] = try JSONSerialization.jsonObject(with: encoder.encode(watchdog.status))
            var video = object["video"] as? [String: Any] ?? [:]
            video["limitedBy"] = second < 20 ? "none" : "bandwidth"
            object["video"] = video
            composed.append(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }
        let contents = try StatsFile.parse(composed.joined(separator: "\n") + "\n", path: "composed.jsonl")
        let diagnosis = ShareDiagnosis(source: "composed.jsonl", contents: contents)
        // Stalled from 10 s: keyframes at 10, 12, 14, 16 (the first left at 11), rebuild at 17,
        // share again at 27, recovered at 31 when the report clears.
        #expect(
            diagnosis.steps.map(\.action) == [
                "keyframe", "keyframe", "keyframe", "keyframe", "rebuild", "shareAgain", "recovered"
            ])
        #expect(diagnosis.steps.map(\.t) == [10, 12, 14, 16, 17, 27, 31])
        #expect(diagnosis.steps.map(\.number) == Array(1...7).map { Optional($0) })
        let report = diagnosis.report
        #expect(
            report.contains(
                "Watchdog: 7 steps; rungs reached: keyframes, rebuild, shareAgain; at the end watching at none"))
        #expect(
            report.contains(
                "  t=17.0 s  rebuild bea: Bea still reports the screen stalled 6 s after the first keyframe left"))
        #expect(report.contains("Limited by: bandwidth 21 s, none 19 s"))
        let svg = ShareTimelinePlot(diagnosis).svg
        try Self.expectWellFormed(svg)
        #expect(svg.contains(">5 rebuild</text>"))
        #expect(
            svg.contains(
                "5. t=17.0 s  rebuild bea: Bea still reports the screen stalled 6 s after the first keyframe left"))
        #expect(
            svg.components(separatedBy: "stroke-dasharray=\"3 2\"").count - 1 == 7 * 3,
            "each step marked on the three panels")
        // Kept for looking at (rsvg-convert plot.svg -o plot.png).
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sharectl-diagnose-test")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(svg.utf8).write(to: directory.appendingPathComponent("plot.svg"))
        try Data(report.utf8).write(to: directory.appendingPathComponent("report.txt"))
        try Data((composed.joined(separator: "\n") + "\n").utf8).write(
            to: directory.appendingPathComponent("composed.jsonl"))
    }

    @Test func fieldsMissingOrUnknownAreTolerated() throws {
        let text = """
            {"t": 1}
            {"t": 2, "video": {"fpsSent": 12, "somethingNew": [1, 2]}, "extra": {"a": 1}}
            {"video": {"fpsEncoded": 14}, "connections": [{"peer": "bea", "rttMs": 40}, {"peer": "cy", "rttMs": 90}]}
            {"t": 4, "connections": {"dan": {"state": "connected", "rttMs": 12}}, "watchdog": {"state": "watching"}}
            """
        let contents = try StatsFile.parse(text)
        #expect(contents.samples.map(\.t) == [1, 2, 3, 4], "a line without t is taken a second after the last")
        #expect(contents.samples[1].fpsSent == 12)
        #expect(contents.samples[2].rttMs == 90, "the worst connection's RTT")
        #expect(contents.samples[3].connections.first?.peer == "dan")
        let report = ShareDiagnosis(source: "x", contents: contents).report
        #expect(report.contains("Peers: 3\n  bea\n  cy\n  dan — last connected"))
        #expect(report.contains("Bitrate: not in the statistics"))
        #expect(report.contains("Watchdog: 0 steps; rungs reached: none; at the end watching at ?"))
        try Self.expectWellFormed(ShareTimelinePlot(ShareDiagnosis(source: "x", contents: contents)).svg)
    }

    /// A room call's file (`share --room`, `watch`): the connections are under `peers[]`, one per
    /// participant, and the screen's figures are what we send them.
    @Test func aCallsPeersAreItsConnections() throws {
        func line(_ t: Double, rtt: Double?) -> String {
            var call = CallStatsLine()
            call.t = t
            call.id = "p1"
            call.signalling = "up"
            call.sharing = true
            call.audioOutput = "pipewire: sharectl-call"
            for (id, name) in [("p2", "bea"), ("p3", "cy")] {
                var peer = CallStatsLine.Peer(id: id, name: name)
                peer.connection.state = "connected"
                peer.connection.pair = "127.0.0.1:1 host <-> 127.0.0.1:2 \(name == "cy" ? "relay" : "host") udp"
                peer.connection.rttMs = rtt
                var sent = CallStatsLine.Sent(
                    framesSent: Int(t) * 30, framesEncoded: Int(t) * 30, width: 1280, height: 720,
                    keyframes: 1, encoder: "libvpx", targetKbps: 1000)
                sent.codecName = "VP8"
                sent.fps = 30
                sent.bitrateKbps = 900
                sent.limitedBy = name == "cy" ? "bandwidth" : "none"
                peer.video = sent
                call.peers.append(peer)
            }
            return try! StatsLineJSON.encode(call)
        }
        let contents = try StatsFile.parse(
            [line(1, rtt: nil), line(2, rtt: 4), line(3, rtt: 6)].joined(separator: "\n"))
        #expect(contents.samples.map(\.connections.count) == [2, 2, 2])
        let report = ShareDiagnosis(source: "call.jsonl", contents: contents).report
        #expect(
            report.contains(
                "Peers: 2\n  bea — last connected, direct, 127.0.0.1:1 host <-> 127.0.0.1:2 host udp\n"
                    + "  cy — last connected, relayed, 127.0.0.1:1 host <-> 127.0.0.1:2 relay udp"), "\(report)")
        #expect(report.contains("Video: VP8 libvpx, 1280×720"))
        #expect(report.contains("Bitrate: min 1800, median 1800, max 1800 kbit/s"), "summed over the two")
        #expect(report.contains("Target: min 2000, median 2000, max 2000 kbit/s"))
        #expect(report.contains("RTT: min 4.0, median 5.0, max 6.0 ms"))
        #expect(report.contains("Limited by: bandwidth 3 s"))
        #expect(report.contains("Connection states: connected 6 samples"))
    }

    /// A Janus watcher's file (`watch --janus --stats-json`): reported as what arrived and was
    /// decoded, with where the picture stood still and the layers asked for; no sender's figures.
    @Test func aJanusWatchersFileIsReportedAsWhatItDecoded() throws {
        // Frames by second: none at 1 s, moving to 5 s, standing until 9 s, moving, standing from 11 s to the end (14 s).
        let frames = [0, 10, 25, 40, 55, 55, 55, 55, 70, 85, 100, 100, 100, 100]
        func line(_ index: Int) -> String {
            var watch = JanusWatchStatsLine()
            watch.t = Double(index + 1)
            watch.publisher = "ana"
            watch.video.framesDecoded = frames[index]
            watch.video.keyframesDecoded = index == 0 ? 0 : (index < 8 ? 1 : 2)
            watch.video.fps = index == 0 ? 0 : Double(frames[index] - frames[index - 1])
            watch.video.bitrateKbps = 400 + index * 10
            watch.video.packetsLost = index
            watch.video.nacksSent = index / 2
            watch.video.plisSent = index / 7
            watch.video.layer = index < 5 ? 2 : 0
            watch.video.queuingDelayMs = Double(index * 5)
            if index > 0 {
                watch.video.codec = "VP8"
                watch.video.width = index < 5 ? 1280 : 320
                watch.video.height = index < 5 ? 720 : 180
            }
            watch.audio.framesDecoded = index * 50
            watch.connection.state = "connected"
            watch.connection.pair = "127.0.0.2:1 host <-> 127.0.0.2:2 host udp"
            return try! StatsLineJSON.encode(watch)
        }
        let contents = try StatsFile.parse(frames.indices.map(line).joined(separator: "\n"))
        let diagnosis = ShareDiagnosis(source: "watch.jsonl", contents: contents)
        #expect(diagnosis.isWatch)
        #expect(diagnosis.standstills == [.init(from: 5, to: 9), .init(from: 11, to: nil)])
        let report = diagnosis.report
        #expect(
            report.contains("Watch of ana through Janus: 13.0 s of statistics (t 1.0 to 14.0 s), 14 samples"),
            "\(report)")
        #expect(report.contains("Video: VP8, 1280×720, then 320×180"))
        #expect(
            report.contains("Peers: 1\n  Janus — last connected, direct, 127.0.0.2:1 host <-> 127.0.0.2:2 host udp"))
        #expect(report.contains("Frame rate decoded: min 0.0, median 5.0, max 15.0 fps"))
        #expect(report.contains("Bitrate received: min 400, median 465, max 530 kbit/s"))
        #expect(report.contains("Frames decoded: 100 (2 keyframes); packets lost 13, NACKs sent 6, PLIs sent 1"))
        #expect(report.contains("First frame: by t 2.0 s"))
        #expect(report.contains("Stood still 2 times for 2 s or more: t 5.0–9.0 s, t 11.0–the end (still standing)"))
        #expect(report.contains("Layer asked: 2 from t 1.0 s, 0 from t 6.0 s (0 the smallest)"))
        #expect(report.contains("Queuing delay: min 0, median ") && report.contains(", max 65 ms"))
        #expect(report.contains("Audio: 650 frames decoded"))
        #expect(report.contains("Watchdog: none on a watcher"))
        #expect(!report.contains("Frame rate encoded") && !report.contains("Share:"), "no sender's figures")
        try Self.expectWellFormed(ShareTimelinePlot(diagnosis).svg)
    }

    /// A share line of this build, read as `ShareStatsLine`: the first lines, before the encoder
    /// runs, hold defaults that are not figures.
    @Test func aShareLineOfThisBuildIsRead() throws {
        var before = ShareStatsLine()
        before.t = 0.5
        var share = ShareStatsLine()
        share.t = 1.5
        share.video.codec = "H264"
        share.video.encoder = "x264"
        share.video.width = 1280
        share.video.height = 720
        share.video.fpsSent = 30
        share.video.fpsEncoded = 30
        share.video.limitedBy = "cpu"
        share.connection.state = "connected"
        share.connection.pair = "a <-> b"
        share.watchdog = WatchdogStatus(
            state: "recovering", rung: "keyframe", steps: 1,
            lastStep: .init(number: 1, t: 1.2, action: "keyframe", subject: nil, reason: "stalled"))
        let contents = try StatsFile.parse([before, share].map { try StatsLineJSON.encode($0) }.joined(separator: "\n"))
        #expect(contents.samples.map(\.fpsSent) == [nil, 30])
        let report = ShareDiagnosis(source: "share.jsonl", contents: contents).report
        #expect(report.contains("Video: H264 x264, 1280×720\n"))
        #expect(report.contains("Limited by: cpu 1 s"))
        #expect(report.contains("Peers: 1\n  a <-> b — last connected, direct"))
        #expect(report.contains("  t=1.2 s  keyframe: stalled"))
    }

    @Test func aBrokenLineIsAnErrorNamingIt() {
        let cases: [(String, String)] = [
            ("{\"t\": 1}\nnot json at all\n{\"t\": 3}", "stats.jsonl line 2: not JSON (\"not json at all\")"),
            ("{\"t\": 1}\n[1, 2]\n{\"t\": 3}", "stats.jsonl line 2: not a JSON object (\"[1, 2]\")"),
            ("{\"t\": \"soon\"}\n{\"t\": 3}", "stats.jsonl line 1: 't' is not a time in seconds"),
            ("{\"t\": -4}", "stats.jsonl line 1: 't' is not a time in seconds"),
            ("", "stats.jsonl: no statistics in it (write one with sharectl share --stats-json PATH)"),
            ("\n\n", "stats.jsonl: no statistics in it (write one with sharectl share --stats-json PATH)"),
            (
                "{\"t\": 1, \"video\": {\"codec\": \"H264\", \"width\": 12",
                "stats.jsonl line 1: not JSON (starts \"{\"t\": 1, \"video\": {\"codec\": \"H264\", \"wid…\")"
            )
        ]
        for (text, message) in cases {
            #expect(throws: StatsFileError.self) { try StatsFile.parse(text, path: "stats.jsonl") }
            do {
                _ = try StatsFile.parse(text, path: "stats.jsonl")
            } catch {
                #expect("\(error)" == message)
            }
        }
    }

    @Test func aLastLineCutShortIsPassedOverWithANote() throws {
        let contents = try StatsFile.parse("{\"t\": 1}\n{\"t\": 2}\n{\"t\": 3, \"vid", path: "s")
        #expect(contents.samples.count == 2)
        #expect(
            contents.notes == [
                "line 3 passed over: not JSON (\"{\"t\": 3, \"vid\") (cut short when the share stopped?)"
            ])
        #expect(ShareDiagnosis(source: "s", contents: contents).report.contains("Notes:\n  line 3 passed over"))
    }

    @Test func aFileThatIsNotThereSaysSo() {
        #expect(
            throws: StatsFileError(
                path: "/nonexistent/x.jsonl", line: nil, reason: "cannot read the file (does it exist? is it readable?)"
            )
        ) {
            try StatsFile.read(path: "/nonexistent/x.jsonl")
        }
    }

    static func expectWellFormed(_ svg: String) throws {
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "the SVG parses as XML: \(String(describing: parser.parserError))")
    }
}

/// Bea, one connection, healthy sending; her report says stalled while `stalled`.
final class StallProbe: WatchdogProbe {
    private let state = Locked((second: 0, stalled: false))
    func set(second: Int, stalled: Bool) { state.withLock { $0 = (second, stalled) } }
    func read() async -> WatchdogReading {
        let (second, stalled) = state.withLock { $0 }
        let frames = second * 30
        return WatchdogReading(
            sender: SenderCounters(
                captureFrames: frames,
                connections: [
                    "bea": ConnectionCounters(
                        framesIn: frames, framesEncoded: frames, framesSent: frames, age: .seconds(second))
                ]),
            people: [
                "bea": PersonObservation(name: "Bea", stalled: stalled, framesSent: frames, keyframesSent: second / 11)
            ])
    }
}

struct NoEffector: WatchdogEffector {
    func perform(_ action: LadderAction) async throws {}
}
