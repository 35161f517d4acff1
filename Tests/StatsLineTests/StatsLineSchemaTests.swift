import Foundation
import StatsLine
import TestSupport
import Testing

/// Every field of each command's line, filled in, encoded as the writers encode it and checked
/// against docs/stats.schema.json by the gates' own checker (scripts/gates/lib/stats.py, with
/// Debian's python3-jsonschema): a field renamed, dropped or given another type in Swift fails
/// here before a gate meets it.
@Suite struct StatsLineSchemaTests {
    static let step = WatchdogStatus.Step(
        number: 3, t: 17.25, action: "rebuild", subject: "bea",
        reason: "Bea still reports the screen stalled")

    static let watchdog = WatchdogStatus(
        state: "recovering", rung: "rebuild", steps: 3, lastStep: step,
        recent: [step], notices: ["Bea's view is being rebuilt"])

    /// A share line with every optional field present.
    static var share: ShareStatsLine {
        var line = ShareStatsLine()
        line.t = 12.5
        line.video.content = "screen"
        line.video.codec = "H264"
        line.video.encoder = "x264"
        line.video.width = 1280
        line.video.height = 720
        line.video.framesCaptured = 370
        line.video.framesEncoded = 360
        line.video.framesSent = 359
        line.video.keyframes = 2
        line.video.keyframeRequests = 1
        line.video.pliReceived = 1
        line.video.firReceived = 0
        line.video.nacksReceived = 4
        line.video.rtxSent = 4
        line.video.packetsSent = 2400
        line.video.bitrateKbps = 1450
        line.video.targetKbps = 1500
        line.video.fpsEncoded = 29.5
        line.video.fpsSent = 29.5
        line.video.policy = "balanced"
        line.video.fpsAllowed = 30
        line.video.limitedBy = "bandwidth"
        line.video.encodersMade = 1
        line.video.encodeMs = 3.2
        line.video.keyframeResponses = 1
        line.video.keyframeResponseMaxMs = 41.5
        var camera = ShareStatsLine.Camera()
        camera.device = "Synthetic cam"
        camera.codec = "VP8"
        camera.encoder = "libvpx"
        camera.width = 480
        camera.height = 360
        camera.fpsSent = 30
        camera.maxKbps = 500
        camera.maxLongSide = 640
        camera.capped = true
        line.camera = camera
        line.audio = ShareStatsLine.Audio()
        line.audio?.levelDbfs = -20
        line.connection.state = "connected"
        line.connection.ice = "completed"
        line.connection.pair = "127.0.0.1:1 host <-> 127.0.0.1:2 host udp"
        line.connection.srtpProfile = "SRTP_AEAD_AES_128_GCM"
        line.connection.rttMs = 1.5
        line.connection.fractionLost = 0.01
        line.connection.remb = 2_000_000
        line.watchdog = watchdog
        return line
    }

    /// A call line with every optional field present and every nullable one holding a value.
    static var call: CallStatsLine {
        var line = CallStatsLine()
        line.t = 8.123
        line.id = "p1"
        line.signalling = "up"
        line.sharing = true
        line.sharesSent = 1
        line.welcomes = 1
        line.left = ["cy"]
        line.audioOutput = "pipewire: sharectl-call"
        line.faults = ["capture-stall"]
        line.watchdog = watchdog
        var peer = CallStatsLine.Peer(id: "p2", name: "bea")
        var view = CallStatsLine.View()
        view.mid = "2"
        view.codec = "VP8"
        view.fps = 29.9
        peer.screen = view
        view.mid = nil
        peer.camera = view
        peer.audio = .init(samplesDecoded: 48_000, framesConcealed: 0, levelDbfs: -20, hearing: true)
        var sent = CallStatsLine.Sent(
            framesSent: 300, framesEncoded: 300, width: 1280, height: 720, keyframes: 1,
            encoder: "libvpx", targetKbps: 1500)
        sent.mid = "1"
        sent.codecName = "VP8"
        sent.limitedBy = "none"
        sent.policy = "balanced"
        peer.video = sent
        peer.cameraSent = .init(
            framesSent: 300, framesEncoded: 300, width: 480, height: 360, keyframes: 1,
            encoder: "libvpx", targetKbps: 500, maxKbps: 500, capped: true)
        peer.cameraSent?.mid = "0"
        peer.audioSent = .init(framesSent: 400, levelDbfs: -20, framesDropped: 0, source: "tone 440 Hz", silent: false)
        peer.connection.state = "connected"
        peer.connection.pair = "127.0.0.1:1 host <-> 127.0.0.1:2 host udp"
        peer.connection.rttMs = 0.8
        let theirs = CallStatsLine.TheirView(
            screenFramesDecoded: 290, screenStalled: false, cameraFramesDecoded: 280,
            hearsUs: true)
        peer.theirView = theirs
        peer.report = .init(theirs)
        line.peers = [peer]
        return line
    }

    /// A Janus watcher's line with every optional field present.
    static var janusWatch: JanusWatchStatsLine {
        var line = JanusWatchStatsLine()
        line.t = 6.004
        line.publisher = "Ann"
        line.video.framesDecoded = 170
        line.video.keyframesDecoded = 2
        line.video.width = 320
        line.video.height = 180
        line.video.fps = 29.9
        line.video.bitrateKbps = 310
        line.video.packetsLost = 12
        line.video.nacksSent = 9
        line.video.plisSent = 1
        line.video.codec = "H264"
        line.video.layer = 0
        line.video.queuingDelayMs = 41.5
        line.audio.framesDecoded = 300
        line.audio.levelDbfs = -20.1
        line.connection.state = "connected"
        line.connection.pair = "127.0.0.2:34506 host <-> 127.0.0.2:20112 host udp"
        return line
    }

    @Test func aJanusWatchLineFitsTheSchemaFullAndAtFirst() async throws {
        try await Self.expectFits([
            ("janusWatch", try StatsLineJSON.encode(Self.janusWatch)),
            ("janusWatch", try StatsLineJSON.encode(JanusWatchStatsLine()))
        ])
        // Told apart from the others' lines: neither of theirs takes it.
        let json = try StatsLineJSON.encode(Self.janusWatch)
        #expect(try await Self.complaints([("share", json), ("call", json)]).count == 2)
        #expect(try StatsLineJSON.decode(json) == .janusWatch(Self.janusWatch))
    }

    @Test func aFullShareLineFitsTheSchema() async throws {
        try await Self.expectFits([("share", try StatsLineJSON.encode(Self.share))])
    }

    @Test func aFullCallLineFitsTheSchema() async throws {
        try await Self.expectFits([("call", try StatsLineJSON.encode(Self.call))])
    }

    /// The first lines: the defaults, before anything is measured (the call's `id`, `pair`, … null).
    @Test func theFirstLinesFitTheSchema() async throws {
        var call = CallStatsLine()
        call.audioOutput = "counted (no PipeWire output: none asked for)"
        var peer = CallStatsLine.Peer(id: "p2", name: "bea")
        peer.video = CallStatsLine.Sent()
        call.peers = [peer]
        try await Self.expectFits([
            ("share", try StatsLineJSON.encode(ShareStatsLine())), ("call", try StatsLineJSON.encode(call))
        ])
    }

    /// The checker itself is not one that passes everything.
    @Test func aRenamedFieldDoesNotFit() async throws {
        let line = try StatsLineJSON.encode(Self.share).replacingOccurrences(of: "\"fpsSent\"", with: "\"fpsOut\"")
        let complaints = try await Self.complaints([("share", line)])
        #expect(complaints.count == 1 && complaints.first?.contains("fpsOut") == true, "\(complaints)")
    }

    @Test func linesReadBackAsWritten() throws {
        #expect(try StatsLineJSON.decode(StatsLineJSON.encode(Self.share)) == .share(Self.share))
        #expect(try StatsLineJSON.decode(StatsLineJSON.encode(Self.call)) == .call(Self.call))
        #expect(try StatsLineJSON.decode(StatsLineJSON.encode(CallStatsLine())) == .call(CallStatsLine()))
    }

    /// A nullable field keeps its key as null; a plain optional is left out.
    @Test func nullsAreWrittenAndOptionalsLeftOut() throws {
        let json = try StatsLineJSON.encode(CallStatsLine.Sent())
        #expect(json.contains(#""encoder":null"#) && json.contains(#""codecName":null"#))
        #expect(!json.contains("targetKbps") && !json.contains("capped"))
        let read = try StatsLineJSON.decode(
            CallStatsLine.Sent.self,
            from: Data(
                #"{"framesSent":1,"framesEncoded":1,"width":2,"height":2,"keyframes":0,"encodersMade":0,"fps":1,"bitrateKbps":3}"#
                    .utf8))
        #expect(read.encoder == nil && read.framesSent == 1, "a missing nullable key reads as null")
    }

    @Test func aNumberJSONCannotHoldIsNamedOrClamped() async throws {
        var line = Self.share
        line.video.fpsSent = .nan
        line.connection.rttMs = .infinity
        #expect(throws: StatsLineError(field: "video.fpsSent", reason: "nan")) { try StatsLineJSON.encode(line) }
        let (json, clamped) = StatsLineJSON.encodeClamping(line)
        #expect(clamped != nil)
        #expect(json.contains(#""fpsSent":0,"#) && json.contains(#""rttMs":1.7976931348623157e+308"#), "\(json)")
        guard case .share(let read) = try StatsLineJSON.decode(json) else { Issue.record("not a share line"); return }
        #expect(read.video.fpsSent == 0 && read.connection.rttMs == .greatestFiniteMagnitude)
        try await Self.expectFits([("share", json)])
        #expect(StatsLineJSON.encodeClamping(Self.share).clamped == nil)
    }

    // MARK: The gates' checker

    static func expectFits(_ lines: [(kind: String, json: String)], sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let complaints = try await complaints(lines)
        #expect(complaints.isEmpty, "\(complaints.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }

    /// What scripts/gates/lib/stats.py says of each `KIND JSON` line: nothing for a line that fits.
    /// The checker runs on a thread of its own: its waits must not hold one of the cooperative
    /// pool's (two on this machine, shared with the whole run).
    static func complaints(_ lines: [(kind: String, json: String)]) async throws -> [String] {
        try await onPlainThread { try checked(lines) }
    }

    private static func checked(_ lines: [(kind: String, json: String)]) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = """
            import json, sys
            sys.path.insert(0, sys.argv[1])
            from lib import stats
            for number, text in enumerate(sys.stdin, 1):
                kind, line = text.rstrip("\\n").split(" ", 1)
                try:
                    stats.check_line(json.loads(line), kind, f"line {number}")
                except stats.StatsLineInvalid as error:
                    print(error)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, root.appendingPathComponent("scripts/gates").path]
        var environment = ProcessInfo.processInfo.environment
        environment["GATE_WORK"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("sharectl-stats-schema").path
        process.environment = environment
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(lines.map { "\($0.kind) \($0.json)\n" }.joined().utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let failed = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CheckerFailure(
                description: "the schema checker did not run (python3 with jsonschema: scripts/setup.sh test "
                    + "installs Debian's python3-jsonschema): \(failed)")
        }
        return said.split(separator: "\n").map(String.init)
    }

    struct CheckerFailure: Error, CustomStringConvertible { var description: String }
}
