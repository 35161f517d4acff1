import CallsClient
import Foundation
import ScreenCapture
import ShareCore
import Synchronization
import VideoSend
import CallMedia

/// `sharectl share --room-file PATH|--room ROOM-URL|$SHARECTL_ROOM_URL --name NAME [--source synthetic] [--camera none|synthetic|auto|DEVICE|synthetic:NAME]
/// [--audio synthetic|mic[:NODE]|none] [--audio-output NODE|none] [--duration S] [--stats-json PATH] [--size WxH] [--fps N]
/// [--bitrate KBPS] [--codec h264|vp8] [--share-for S]`: joins a room of `sharectl serve` and shares the
/// screen into it (one connection per participant), with a status line per participant each second.
/// SIGUSR1 stops or restarts the share while staying in the call; `--share-for S` stops it after S s.
/// `--camera synthetic` sends the synthetic pattern; a camera (`auto`, a device, `synthetic:NAME?FAULTS`)
/// runs the camera director and sends its feed. Either is capped at 500 kbit/s and 360 lines while
/// the screen is shared and given its defaults back when the share stops.
enum RoomShareCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        guard let invite = try SecretArguments.roomLink(arguments) else {
            throw Arguments.UsageError(
                description: "share needs the room link: --room-file PATH, SHARECTL_ROOM_URL or --room URL")
        }
        if arguments.value("metrics-listen") != nil {
            throw Arguments.UsageError(
                description: "--metrics-listen serves a WHIP share's figures; a room share's are in --stats-json")
        }
        if arguments.value("keyframe-interval") != nil {
            // Room viewers ask for keyframes themselves (PLI), and their watchdog climbs from there.
            throw Arguments.UsageError(
                description: "--keyframe-interval is for WHIP shares; in a room every viewer asks for keyframes")
        }
        var options = try RoomOptions.parse(arguments, invite: invite)
        options.shareScreen = true
        // Shared layer encoders unless --no-simulcast asks for one encoder per viewer.
        options.sharedLayers = !arguments.has("no-simulcast")
        if let size = arguments.value("size") {
            let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (96...3840).contains(parts[0]), (60...2160).contains(parts[1]) else {
                throw Arguments.UsageError(
                    description: "--size wants WIDTHxHEIGHT between 96x60 and 3840x2160, not '\(size)'")
            }
            (options.screenWidth, options.screenHeight) = (parts[0], parts[1])
        }
        options.framesPerSecond = try arguments.int("fps")
        guard (1...30).contains(options.framesPerSecond) else {
            throw Arguments.UsageError(description: "--fps is 1 to 30")
        }
        options.screenBitrate = try arguments.int("bitrate", default: 2000) * 1000
        guard options.screenBitrate >= 100_000 else {
            throw Arguments.UsageError(description: "--bitrate is at least 100 (kbit/s)")
        }
        if let policy = arguments.value("policy") {
            guard let parsed = ScreenSendPolicy(argument: policy) else {
                throw Arguments.UsageError(description: "--policy wants balanced, detail or motion, not '\(policy)'")
            }
            options.policy = parsed
        }
        let shareFor = try arguments.double("share-for")
        // A portal or PipeWire screen: opened (and, for a portal, granted) before joining, so a
        // refusal is said before anyone sees us; one capture feeds every connection.
        let source = arguments.value("source") ?? "synthetic"
        let capture = try CaptureSourceArguments.make(source, arguments, loop: ProcessLoop.shared, logger: logger)
        if let capture {
            do {
                try await capture.prepare()
            } catch {
                capture.stop()
                throw ShareFailure(description: "could not start the share: \(error)")
            }
            say(
                "Sharing \(CaptureSourceArguments.describe(capture)) (\(options.policy.label)) into \(redactedURL(invite)) as \(options.name)…"
            )
        } else {
            say(
                "Sharing the synthetic screen (\(options.screenWidth)×\(options.screenHeight) at \(options.framesPerSecond) fps, "
                    + "\(options.policy.label)) into \(redactedURL(invite)) as \(options.name)…")
        }
        try await RoomRun.run(
            options: options, arguments: arguments, logger: logger, shareFor: shareFor, capture: capture)
    }
}

/// What `share --room` and `watch` have in common: the room options, and running a call with its
/// status lines, `--stats-json` lines and snapshots until `--duration` or a signal.
enum RoomOptions {
    /// The defaults of `--name` and `--audio` are the command's own (`CommandTables`).
    static func parse(_ arguments: Arguments, invite: String) throws -> CallSession.Options {
        var options = CallSession.Options(invite: invite, name: arguments.valueOrDefault("name"))
        guard !options.name.isEmpty, options.name.count <= 64 else {
            throw Arguments.UsageError(description: "--name is 1 to 64 characters")
        }
        // none, synthetic (the pattern), or a camera through the director (started by `RoomRun`).
        let camera = arguments.value("camera") ?? "none"
        options.camera = CallSession.CameraSource(rawValue: camera) ?? .none
        if usesDirector(arguments) { _ = try CameraCommand.parseDevices(camera) }
        let audio = arguments.valueOrDefault("audio")
        guard let audioSource = CallSession.AudioSource(argument: audio) else {
            throw Arguments.UsageError(
                description: "--audio wants synthetic, silence, mic, mic:NODE or none, not '\(audio)'")
        }
        options.audio = arguments.has("no-audio") ? .none : audioSource
        options.audioBitrate = try arguments.audioBitrate()
        if case .microphone = options.audio, let why = PipeWireCapture.probeDaemon() {
            throw Arguments.UsageError(
                description: "--audio \(audio): \(why); start PipeWire, or use --audio synthetic or none")
        }
        if case .microphone(let node) = options.audio {
            // PipeWire's echo canceller on the microphone, loaded when the capture opens.
            let settings = EchoCancelSettings(
                echoCancellation: !arguments.has("no-echo-cancel"),
                noiseSuppression: !arguments.has("no-noise-suppression"))
            let output = arguments.value("audio-output").flatMap { $0 == "none" || $0.isEmpty ? nil : $0 }
            EchoCanceller.shared.configure(settings: settings, microphone: node, output: output)
        }
        switch arguments.value("audio-output") {
        case nil: break
        case "none"?: AudioOutput.shared.configure(target: nil, enabled: false)
        case let node?:
            guard !node.isEmpty else {
                throw Arguments.UsageError(description: "--audio-output wants a node name or none")
            }
            AudioOutput.shared.configure(target: node)
        }
        if let codec = arguments.value("codec") {
            guard let parsed = VideoCodec(argument: codec) else {
                throw Arguments.UsageError(description: "--codec wants h264 or vp8, not '\(codec)'")
            }
            options.codec = parsed
        }
        do { _ = try CallSession.socketURL(invite: invite) } catch {
            throw Arguments.UsageError(description: "\(error)")
        }
        return options
    }

    /// `--camera` names a camera for the director (not none, not the synthetic pattern).
    static func usesDirector(_ arguments: Arguments) -> Bool {
        guard let camera = arguments.value("camera") else { return false }
        return CallSession.CameraSource(rawValue: camera) == nil
    }
}

enum RoomRun {
    /// Joins, prints the status lines each second, writes `--stats-json` and `--snapshot` files,
    /// and leaves at `--duration` or on SIGINT/SIGTERM. `shareFor` > 0 stops the share after that
    /// many seconds (the call goes on). `status` (if given) replaces the printing of status lines.
    static func run(
        options: CallSession.Options, arguments: Arguments, logger: Logger, shareFor: Double = 0,
        quiet: Bool = false, prefix: String = "", readsInput: Bool = true, capture: ScreenCaptureSource? = nil
    ) async throws {
        var options = options
        let director = RoomOptions.usesDirector(arguments) ? try ShareCamera.director(arguments, logger: logger) : nil
        options.cameraFeed = director?.feed
        let duration = try arguments.double("duration")
        let statsFile = try openStats(arguments.value("stats-json"))
        let snapshotDirectory = arguments.value("snapshot")
        if let snapshotDirectory {
            do {
                try FileManager.default.createDirectory(atPath: snapshotDirectory, withIntermediateDirectories: true)
            } catch {
                throw Arguments.UsageError(
                    description: "cannot make the --snapshot folder \(snapshotDirectory): \(error)")
            }
        }
        let loop = ProcessLoop.shared
        defer { loop.stop() }
        defer { capture?.stop() }
        // Last out of the call: its microphone and playout streams are closed by now.
        defer { EchoCanceller.shared.stop() }
        var configuration = ShareController.Configuration(destination: .room(options))
        configuration.capture = capture
        configuration.camera = director
        configuration.duration = duration > 0 ? .milliseconds(Int64(duration * 1000)) : nil
        configuration.reconnect = arguments.has("reconnect")
        configuration.shareFor = shareFor > 0 ? .milliseconds(Int64(shareFor * 1000)) : nil
        let controller = ShareController(configuration: configuration, loop: loop, logger: logger)
        KeptControllers.keep(controller)
        let user = UserRequests().takeStopSignals().takeToggleSignal()
        if readsInput { _ = user.readStandardInput() }
        let words = ControllerInput.Words(
            prefix: prefix, stopTyped: "Leaving the room (stop)…", stopSignal: "Leaving the room (signal)…")
        // Every 5 s, the last pictures decoded, for as long as the call.
        var snapshots: (@Sendable () async -> Void)?
        if let snapshotDirectory {
            snapshots = { await keepSaving(controller, to: snapshotDirectory) }
        }
        let output = statsFile.map(StatsOutput.init)
        let ending: ShareController.Ending
        do {
            ending = try await ControllerInput.run(controller, forwarding: user, words: words, beside: snapshots) {
                event in
                switch event {
                case .call(let stats):
                    if !quiet { for line in stats.statusLines { say(prefix + line) } }
                    output?.write(stats.jsonLine { StandardError.write("sharectl: --stats-json: \($0)\n") })
                case .notice(let text):
                    say(prefix + text)
                case .published, .stats, .publishingFailed, .connectionLost:
                    break
                }
            }
        } catch {
            throw ShareFailure(description: error.description)
        }
        if let snapshotDirectory { await saveSnapshots(controller, to: snapshotDirectory) }
        output?.close()
        if case .failed(let reason) = ending { throw ShareFailure(description: reason) }
        say("\(prefix)Left the room.")
    }

    static func openStats(_ path: String?) throws -> FileHandle? {
        guard let path else { return nil }
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw Arguments.UsageError(description: "cannot write --stats-json \(path)")
        }
        return handle
    }

    /// Saves the pictures every 5 s until cancelled.
    static func keepSaving(_ controller: ShareController, to directory: String) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(5))
            if Task.isCancelled { break }
            await saveSnapshots(controller, to: directory)
        }
    }

    /// `DIR/NAME-screen.png` and `DIR/NAME-camera.png`: the last picture decoded of each.
    static func saveSnapshots(_ controller: ShareController, to directory: String) async {
        for (name, what, frame) in await controller.pictures() {
            let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
            let path = "\(directory)/\(safe)-\(what).png"
            do { try Data(PNGWriter.encode(i420: frame)).write(to: URL(fileURLWithPath: path)) } catch {
                StandardError.write("sharectl: could not write \(path): \(error)\n")
            }
        }
    }
}

/// Calls are kept until the process exits, like finished WHIP sessions (see `ShareController.ended`).
enum KeptCalls {
    private static let calls = Locked<[CallSession]>([])
    static func keep(_ call: CallSession) { calls.withLock { $0.append(call) } }
}
