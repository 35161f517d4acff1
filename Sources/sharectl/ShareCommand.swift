import CallsClient
import CallsServer
import Foundation
import GLibLoop
import ScreenCapture
import ShareCore
import Signalling
import VideoSend
import WebRTCTransport

/// `sharectl share --source synthetic|portal[:window|:virtual]|pipewire:NODE [--unattended]
/// [--restore-token-file PATH] [--no-cursor] --whip URL [--token-file PATH | --token T | $WHIP_TOKEN] [--codec h264|vp8] [--duration S]
/// [--stats-json PATH] [--size WxH] [--fps N] [--bitrate KBPS] [--policy P] [--encoder E] [--no-audio] [--relay-only] [--reconnect]
/// [--camera auto|DEVICE|synthetic:NAME] (beside the screen, capped; with `--source none` alone)
/// [--stun stun:HOST[:PORT]] [--turn turn:HOST[:PORT][?transport=udp|tcp] --turn-user U
/// --turn-credential-file PATH | --turn-credential C]`
enum ShareCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        let source = arguments.valueOrDefault("source")
        guard source != "none" || arguments.value("camera") != nil else {
            throw Arguments.UsageError(
                description: "--source none sends the camera alone: add --camera auto|DEVICE|synthetic:NAME")
        }
        if arguments.has("simulcast"), arguments.has("no-simulcast") {
            throw Arguments.UsageError(description: "--simulcast and --no-simulcast contradict each other: give one")
        }
        var roomJanus: JanusTarget?
        var room: JanusRoomPresence?
        if SecretArguments.wantsRoom(arguments) {
            // A room on Janus (`serve --sfu janus`) is published into like any Janus room, through
            // the server's door to it, under the name given; the room's own socket carries the
            // share's announcement and the viewers' reports, for the watchdog.
            if let invite = try SecretArguments.roomLink(arguments) {
                do {
                    roomJanus = try await RoomSFU.janusTarget(
                        invite: invite, display: arguments.valueOrDefault("name"), loop: ProcessLoop.shared,
                        logger: logger)
                    if roomJanus != nil {
                        let presence = try JanusRoomPresence(
                            invite: invite, name: arguments.valueOrDefault("name"), loop: ProcessLoop.shared,
                            logger: logger)
                        try await presence.start()
                        room = presence
                    }
                } catch {
                    throw ShareFailure(description: "could not join the room: \(error)")
                }
            }
            // In a mesh room every viewer is fed from three shared layer encoders (--no-simulcast:
            // an encoder per viewer).
            if roomJanus == nil { return try await RoomShareCommand.run(arguments, logger: logger) }
            say("The room runs on Janus: publishing into it through the room server.")
        }
        if arguments.value("camera") == "synthetic" {
            throw Arguments.UsageError(
                description: "--camera synthetic is a room call's test pattern; over WHIP name a "
                    + "synthetic camera for the camera director: --camera synthetic:NAME")
        }
        let loop = ProcessLoop.shared
        defer { loop.stop() }
        let capture =
            source == "none" ? nil : try CaptureSourceArguments.make(source, arguments, loop: loop, logger: logger)
        defer { capture?.stop() }
        let janus = try roomJanus ?? janusTarget(arguments)
        guard let endpoint = arguments.value("whip") ?? janus?.url else {
            throw Arguments.UsageError(
                description: "share needs somewhere to send: --whip URL, or --janus URL --janus-room ID")
        }
        guard janus == nil || arguments.value("whip") == nil else {
            throw Arguments.UsageError(description: "--whip and --janus are two places to send: give one")
        }
        var options = WHIPShareSession.Options(
            endpoint: endpoint, token: janus == nil ? try SecretArguments.whipToken(arguments) : nil)
        options.janus = janus
        options.room = room
        options.simulcast = janus != nil ? !arguments.has("no-simulcast") : arguments.has("simulcast")
        options.iceInterfaces = arguments.values("ice-interface")
        if let codec = arguments.value("codec") {
            guard let parsed = VideoCodec(argument: codec) else {
                throw Arguments.UsageError(description: "--codec wants h264 or vp8, not '\(codec)'")
            }
            options.codec = parsed
        }
        if let size = arguments.value("size") {
            let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (96...3840).contains(parts[0]), (60...2160).contains(parts[1]) else {
                throw Arguments.UsageError(
                    description: "--size wants WIDTHxHEIGHT between 96x60 and 3840x2160, not '\(size)'")
            }
            (options.width, options.height) = (parts[0], parts[1])
        }
        options.framesPerSecond = try arguments.int("fps")
        guard (1...30).contains(options.framesPerSecond) else {
            throw Arguments.UsageError(description: "--fps is 1 to 30")
        }
        options.bitrate = try arguments.int("bitrate", default: 4000) * 1000
        guard options.bitrate >= 100_000 else {
            throw Arguments.UsageError(description: "--bitrate is at least 100 (kbit/s)")
        }
        if let policy = arguments.value("policy") {
            guard let parsed = ScreenSendPolicy(argument: policy) else {
                throw Arguments.UsageError(description: "--policy wants balanced, detail or motion, not '\(policy)'")
            }
            options.policy = parsed
        }
        let keyframeSeconds = try arguments.int("keyframe-interval")
        guard (1...600).contains(keyframeSeconds) else {
            throw Arguments.UsageError(description: "--keyframe-interval is 1 to 600 seconds")
        }
        options.keyframeIntervalMicros = Int64(keyframeSeconds) * 1_000_000
        options.hardwareEncoder = try chooseEncoder(arguments.valueOrDefault("encoder"), codec: options.codec)
        options.audio = !arguments.has("no-audio")
        options.audioBitrate = try arguments.audioBitrate()
        options.relayOnly = arguments.has("relay-only")
        if let stun = arguments.value("stun") {
            do { options.stunServer = try ICEAgent.STUNServer(url: stun) } catch {
                throw Arguments.UsageError(description: "--stun: \(error)")
            }
        }
        if let turn = arguments.value("turn") {
            guard let user = arguments.value("turn-user"),
                let credential = try SecretArguments.turnCredential(arguments)
            else {
                throw Arguments.UsageError(
                    description: "--turn needs --turn-user and --turn-credential-file "
                        + "(or --turn-credential)")
            }
            do {
                options.turnServers = [try ICEAgent.TURNServer(url: turn, username: user, credential: credential)]
            } catch {
                throw Arguments.UsageError(description: "--turn: \(error)")
            }
        }
        let duration = try arguments.double("duration")
        let statsPath = arguments.value("stats-json")
        var statsFile: FileHandle?
        if let statsPath {
            guard FileManager.default.createFile(atPath: statsPath, contents: nil),
                let handle = FileHandle(forWritingAtPath: statsPath)
            else {
                throw Arguments.UsageError(description: "cannot write --stats-json \(statsPath)")
            }
            statsFile = handle
        }

        let camera = try ShareCamera.director(arguments, logger: logger)
        options.screen = source != "none"
        if let capture {
            do {
                try await capture.prepare()
            } catch {
                throw ShareFailure(description: "could not start the share: \(error)")
            }
        }
        let destination = janus.map { "room \($0.room) of Janus at \(redactedURL($0.url))" } ?? redactedURL(endpoint)
        let besideText = camera != nil ? ", and the camera beside it (at most 500 kbit/s and 360 lines)" : ""
        if let capture {
            say(
                "Sharing \(CaptureSourceArguments.describe(capture)) (\(options.policy.label))\(besideText) to \(destination)…"
            )
        } else if options.screen {
            say(
                "Sharing the synthetic screen (\(options.width)×\(options.height) at \(options.framesPerSecond) fps, "
                    + "\(options.policy.label))\(besideText) to \(destination)…")
        } else {
            say("Sharing the camera to \(destination)…")
        }
        var configuration = ShareController.Configuration(session: options)
        configuration.capture = capture
        configuration.camera = camera
        configuration.reconnect = arguments.has("reconnect")
        configuration.duration = duration > 0 ? .milliseconds(Int64(duration * 1000)) : nil
        let controller = ShareController(configuration: configuration, loop: loop, logger: logger)
        KeptControllers.keep(controller)
        var monitor: ShareMonitor?
        var statusServer: StatusServer?
        if let address = arguments.value("metrics-listen") {
            let made = ShareMonitor()
            statusServer = try await ShareMonitor.serve(made, at: address, logger: logger)
            monitor = made
        }
        let watched = monitor
        // In a room on Janus, SIGUSR1 takes the screen out of the room and puts it back.
        let requests = UserRequests().takeStopSignals()
        let user = (room != nil ? requests.takeToggleSignal() : requests).readStandardInput()
        let output = statsFile.map(StatsOutput.init)
        let ending: ShareController.Ending
        do {
            ending = try await ControllerInput.run(controller, forwarding: user) { event in
                tell(event, statsFile: output, monitor: watched, capture: capture, janus: janus != nil)
            }
        } catch {
            await statusServer?.stop()
            await room?.leave()
            throw ShareFailure(description: error.description)
        }
        await statusServer?.stop()
        await room?.leave()
        if let capture {
            say(
                "Capture: \(capture.realFrames) frames from the screen, \(capture.repeatedFrames) repeats of a still screen, "
                    + "\(capture.restartCount) restarts, \(capture.corruptedBuffers) corrupted skipped")
        }
        output?.close()
        service.stopping()
        if case .failed(let reason) = ending { throw ShareFailure(description: reason) }
        say(janus != nil ? "Share ended; it left the Janus room." : "Share ended; the WHIP session was deleted.")
    }

    /// `--janus URL --janus-room ID [--pin PIN] [--display NAME]`, or nil without `--janus`.
    /// `display` is the name to publish under (nil for a watcher, which has none).
    static func janusTarget(_ arguments: Arguments, display: String? = "sharectl") throws -> JanusTarget? {
        guard let url = arguments.value("janus") else {
            for option in ["janus-room", "pin", "display"] where arguments.value(option) != nil {
                throw Arguments.UsageError(
                    description: "--\(option) is for a Janus room: add --janus URL --janus-room ID")
            }
            return nil
        }
        guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
            throw Arguments.UsageError(
                description: "--janus wants Janus's WebSocket address, ws://HOST:8188, not '\(redactedURL(url))'")
        }
        guard let text = arguments.value("janus-room") else {
            throw Arguments.UsageError(description: "--janus needs the room: --janus-room ID")
        }
        guard let room = JanusRoom(argument: text) else {
            throw Arguments.UsageError(
                description: "--janus-room wants a room id (digits, or Janus's string id), not '\(text)'")
        }
        let display = display == nil ? nil : arguments.value("display") ?? display
        guard display.map({ (1...64).contains($0.count) }) ?? true else {
            throw Arguments.UsageError(description: "--display is 1 to 64 characters")
        }
        return JanusTarget(url: url, room: room, pin: arguments.value("pin"), display: display)
    }

    /// Under systemd (a kiosk's unit): READY, STATUS and the watchdog (`ServiceNotifier`).
    static let service = ServiceNotifier()
    /// The share's health each second, for systemd and `/healthz` alike.
    static let health = Locked(ServiceHealth())

    /// Says what the controller tells, and writes each second's figures to `--stats-json`.
    static func tell(
        _ event: ShareController.Event, statsFile: StatsOutput?, monitor: ShareMonitor? = nil,
        capture: ScreenCaptureSource? = nil, janus: Bool = false
    ) {
        switch event {
        case .published(let number):
            if number > 1 { say("Published again (session \(number)).") }
            monitor?.published(session: number)
        case .call:
            break  // a room's figures; this is a WHIP share
        case .stats(let stats):
            // Under systemd the status line is the unit's STATUS= (systemctl status), not a line a
            // second in the journal.
            if !service.enabled { for line in stats.statusLines { say(line) } }
            statsFile?.write(stats.jsonLine { StandardError.write("sharectl: --stats-json: \($0)\n") })
            let (verdict, becameReady) = health.withLock { $0.observe(stats) }
            service.observe(stats, verdict: verdict, becameReady: becameReady)
            if let capture { monitor?.captureRestarted(total: capture.restartCount) }
            monitor?.observe(stats, verdict: verdict)
        case .notice(let text):
            say(text)
            service.status(text)
        case .publishingFailed(let reason, let retryIn):
            say("Publishing failed: \(reason); trying again in \(retryIn.components.seconds) s")
        case .connectionLost(let reason, let retryIn):
            service.status("The connection was lost (\(reason)); publishing again in \(retryIn.components.seconds) s")
            say(
                "The connection was lost (\(reason)); \(janus ? "it left the Janus room" : "the WHIP session was deleted"); "
                    + "publishing again in \(retryIn.components.seconds) s…")
        }
    }
}

/// `--encoder auto|x264|vaapi|nvenc`: auto takes a hardware H.264 encoder when one opens on this
/// machine, and says which it took or why there is none.
func chooseEncoder(_ choice: String, codec: VideoCodec?) throws -> LibavH264Encoder.Backend? {
    switch choice {
    case "x264": return nil
    case "vaapi", "nvenc":
        let backend: LibavH264Encoder.Backend = choice == "vaapi" ? .vaapi : .nvenc
        let finding = HardwareEncoders.probe().first { $0.backend == backend }
        guard let finding, finding.usable else {
            throw Arguments.UsageError(description: "--encoder \(choice): \(finding?.reason ?? "not found")")
        }
        return backend
    case "auto":
        guard codec != .vp8 else { return nil }
        let findings = HardwareEncoders.probe()
        if let usable = findings.first(where: \.usable) {
            say("Encoder: \(usable.backend.implementation) for H.264 (\(usable.reason))")
            return usable.backend
        }
        say("Encoder: x264 for H.264 — no hardware encoder (\(findings.map(\.description).joined(separator: "; ")))")
        return nil
    default:
        throw Arguments.UsageError(description: "--encoder wants auto, x264, vaapi or nvenc, not '\(choice)'")
    }
}

/// Controllers are kept until the process exits (with the sessions each has ended; see
/// `ShareController.ended`).
enum KeptControllers {
    private static let controllers = Locked<[ShareController]>([])
    static func keep(_ controller: ShareController) { controllers.withLock { $0.append(controller) } }
}

/// `--stats-json`: one line a second, written as it comes.
final class StatsOutput: Sendable {
    private let handle: FileHandle
    init(_ handle: FileHandle) { self.handle = handle }
    func write(_ line: String) { handle.write(Data((line + "\n").utf8)) }
    func close() { try? handle.close() }
}

struct ShareFailure: Error, CustomStringConvertible {
    let description: String
}

/// SIGINT and SIGTERM ask the share to stop; they arrive through a DispatchSource. Used from the
/// command's own task only.
final class StopSignal {
    private let flag = Flag()
    private let sources: [any DispatchSourceSignal]

    init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let flag = self.flag
            source.setEventHandler { flag.set() }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    var requested: Bool { flag.isSet }

    /// The same question, for another task.
    var isRequested: @Sendable () -> Bool {
        let flag = self.flag
        return { flag.isSet }
    }

    private final class Flag: Sendable {
        private let value = Synchronization.Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }
}

import Synchronization
