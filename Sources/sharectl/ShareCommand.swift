import CallsClient
import Foundation
import GLibLoop
import ScreenCapture
import ShareCore
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
            throw Arguments.UsageError(description: "--source none sends the camera alone: add --camera auto|DEVICE|synthetic:NAME")
        }
        if SecretArguments.wantsRoom(arguments) { return try await RoomShareCommand.run(arguments, logger: logger) }
        if arguments.value("camera") == "synthetic" {
            throw Arguments.UsageError(description: "--camera synthetic is a room call's test pattern; over WHIP name a "
                                       + "synthetic camera for the camera director: --camera synthetic:NAME")
        }
        let loop = ProcessLoop.shared
        defer { loop.stop() }
        let capture = source == "none" ? nil : try CaptureSourceArguments.make(source, arguments, loop: loop, logger: logger)
        defer { capture?.stop() }
        guard let endpoint = arguments.value("whip") else {
            throw Arguments.UsageError(description: "share needs somewhere to send: --whip URL")
        }
        var options = WHIPShareSession.Options(endpoint: endpoint, token: try SecretArguments.whipToken(arguments))
        if let codec = arguments.value("codec") {
            guard let parsed = VideoCodec(argument: codec) else {
                throw Arguments.UsageError(description: "--codec wants h264 or vp8, not '\(codec)'")
            }
            options.codec = parsed
        }
        if let size = arguments.value("size") {
            let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (96...3840).contains(parts[0]), (60...2160).contains(parts[1]) else {
                throw Arguments.UsageError(description: "--size wants WIDTHxHEIGHT between 96x60 and 3840x2160, not '\(size)'")
            }
            (options.width, options.height) = (parts[0], parts[1])
        }
        options.framesPerSecond = try arguments.int("fps")
        guard (1...30).contains(options.framesPerSecond) else {
            throw Arguments.UsageError(description: "--fps is 1 to 30")
        }
        options.bitrate = try arguments.int("bitrate", default: 4000) * 1000
        guard options.bitrate >= 100_000 else { throw Arguments.UsageError(description: "--bitrate is at least 100 (kbit/s)") }
        if let policy = arguments.value("policy") {
            guard let parsed = ScreenSendPolicy(argument: policy) else {
                throw Arguments.UsageError(description: "--policy wants balanced, detail or motion, not '\(policy)'")
            }
            options.policy = parsed
        }
        options.hardwareEncoder = try chooseEncoder(arguments.valueOrDefault("encoder"), codec: options.codec)
        options.audio = !arguments.has("no-audio")
        options.relayOnly = arguments.has("relay-only")
        if let stun = arguments.value("stun") {
            do { options.stunServer = try ICEAgent.STUNServer(url: stun) } catch {
                throw Arguments.UsageError(description: "--stun: \(error)")
            }
        }
        if let turn = arguments.value("turn") {
            guard let user = arguments.value("turn-user"), let credential = try SecretArguments.turnCredential(arguments)
            else {
                throw Arguments.UsageError(description: "--turn needs --turn-user and --turn-credential-file "
                                           + "(or --turn-credential)")
            }
            do { options.turnServers = [try ICEAgent.TURNServer(url: turn, username: user, credential: credential)] } catch {
                throw Arguments.UsageError(description: "--turn: \(error)")
            }
        }
        let duration = try arguments.double("duration")
        let statsPath = arguments.value("stats-json")
        var statsFile: FileHandle?
        if let statsPath {
            guard FileManager.default.createFile(atPath: statsPath, contents: nil),
                  let handle = FileHandle(forWritingAtPath: statsPath) else {
                throw Arguments.UsageError(description: "cannot write --stats-json \(statsPath)")
            }
            statsFile = handle
        }

        let camera = try ShareCamera.start(arguments, logger: logger)
        defer { camera?.stop() }
        options.screen = source != "none"
        options.camera = camera?.feed
        options.cameraFrameCount = camera?.frameCount
        if let capture {
            do {
                try await capture.prepare()
            } catch {
                throw ShareFailure(description: "could not start the share: \(error)")
            }
            options.videoSource = capture
        }
        let besideText = camera != nil ? ", and the camera beside it (at most 500 kbit/s and 360 lines)" : ""
        if let capture {
            say("Sharing \(CaptureSourceArguments.describe(capture)) (\(options.policy.label))\(besideText) to \(redactedURL(endpoint))…")
        } else if options.screen {
            say("Sharing the synthetic screen (\(options.width)×\(options.height) at \(options.framesPerSecond) fps, "
                + "\(options.policy.label))\(besideText) to \(redactedURL(endpoint))…")
        } else {
            say("Sharing the camera to \(redactedURL(endpoint))…")
        }
        let reconnect = arguments.has("reconnect")
        let stop = StopSignal()
        let control = ControlInput()
        control.start()
        let started = ContinuousClock.now
        var publishes = 0
        var backoff = Duration.seconds(2)
        var failure: String?
        while true {
            let session = WHIPShareSession(options: options, loop: loop, logger: logger)
            FinishedSessions.keep(session)
            publishes += 1
            do {
                try await session.start()
            } catch {
                guard publishes > 1 else { throw ShareFailure(description: "could not start the share: \(error)") }
                say("Publishing again failed: \(error)")
                if await waitBeforePublishing(backoff, stop: stop, control: control) { break }
                backoff = min(backoff * 2, .seconds(60))
                continue
            }
            if publishes > 1 { say("Published again (session \(publishes)).") }
            let publishedAt = ContinuousClock.now
            let ending = await follow(session, capture: capture, camera: camera, stop: stop, control: control,
                                      statsFile: statsFile, started: started, duration: duration)
            await session.stop()
            guard case .connectionLost(let reason) = ending, reconnect else {
                if case .failed(let reason) = ending { failure = reason }
                if case .connectionLost(let reason) = ending { failure = "the connection was lost: \(reason)" }
                break
            }
            // A share that stayed up a minute starts its waits from the shortest again.
            if publishedAt.duration(to: .now) >= .seconds(60) { backoff = .seconds(2) }
            say("The connection was lost (\(reason)); the WHIP session was deleted; publishing again in "
                + "\(backoff.components.seconds) s…")
            if await waitBeforePublishing(backoff, stop: stop, control: control) { break }
            backoff = min(backoff * 2, .seconds(60))
            if let capture {
                // The last session's end closed the capture: open it again (a portal by its
                // restore token, no picker where one was saved).
                do {
                    try await capture.prepare()
                } catch {
                    failure = "the screen capture could not be opened again: \(error)"
                    break
                }
            }
        }
        if let capture {
            say("Capture: \(capture.realFrames) frames from the screen, \(capture.repeatedFrames) repeats of a still screen, "
                + "\(capture.restartCount) restarts, \(capture.corruptedBuffers) corrupted skipped")
        }
        try? statsFile?.close()
        if let failure { throw ShareFailure(description: failure) }
        say("Share ended; the WHIP session was deleted.")
    }

    enum Ending {
        /// Asked to stop (signal, `stop` typed, `--duration` over).
        case stopped
        case failed(String)
        case connectionLost(String)
    }

    /// Runs one WHIP session's status loop: typed commands, the status lines and `--stats-json`
    /// each second, until it is asked to stop or something ends it.
    static func follow(_ session: WHIPShareSession, capture: ScreenCaptureSource?, camera: ShareCamera?, stop: StopSignal,
                       control: ControlInput, statsFile: FileHandle?, started: ContinuousClock.Instant,
                       duration: Double) async -> Ending {
        var previous: ShareStats?
        var stopAsked = false
        while true {
            // Typed commands take effect within a tenth of a second; figures come once a second.
            for _ in 0..<10 where !stopAsked {
                try? await Task.sleep(for: .milliseconds(100))
                let (commands, complaints) = control.take()
                for complaint in complaints { say(complaint) }
                for command in commands {
                    switch command {
                    case .policy(let name):
                        if let policy = ScreenSendPolicy(argument: name) {
                            await session.setPolicy(policy)
                            say("Send policy: \(policy.label)")
                        } else {
                            say("policy wants balanced, detail or motion, not '\(name)'")
                        }
                    case .keyframe:
                        await session.requestKeyframe()
                        say("Keyframe asked for")
                    case .fault(let fault):
                        say(await session.injectFault(fault))
                    case .stop:
                        stopAsked = true
                    }
                }
                if stop.requested { break }
            }
            var stats = await session.stats(previous: previous)
            if let camera, stats.camera != nil { stats.camera?.device = await camera.deviceName() ?? "" }
            previous = stats
            for line in stats.statusLines { say(line) }
            if let statsFile { statsFile.write(Data((stats.jsonLine() + "\n").utf8)) }
            for notice in capture?.takeNotices() ?? [] { say(notice) }
            if let ended = capture?.failure { return .failed("the screen capture ended: \(ended)") }
            if stop.requested { say("Stopping (signal)…"); return .stopped }
            if stopAsked { say("Stopping…"); return .stopped }
            if duration > 0, ContinuousClock.now - started >= .milliseconds(Int64(duration * 1000)) { return .stopped }
            if !(await session.isConnected) { return .connectionLost(await session.connectionState) }
        }
    }

    /// Waits `delay` before publishing again; true if asked to stop meanwhile.
    static func waitBeforePublishing(_ delay: Duration, stop: StopSignal, control: ControlInput) async -> Bool {
        let end = ContinuousClock.now + delay
        while ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(100))
            if stop.requested { say("Stopping (signal)…"); return true }
            if control.take().commands.contains(where: { if case .stop = $0 { true } else { false } }) {
                say("Stopping…")
                return true
            }
        }
        return false
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

/// Finished sessions are kept until the process exits instead of being torn down object by object:
/// once in about sixty gate runs, freeing the C libraries' objects after a share had ended showed
/// heap corruption (glibc's malloc_consolidate check) that is not yet found. The share itself is
/// stopped and its WHIP session deleted before this matters; only the final frees are skipped.
enum FinishedSessions {
    private static let sessions = Mutex<[WHIPShareSession]>([])
    static func keep(_ session: WHIPShareSession) { sessions.withLock { $0.append(session) } }
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

    private final class Flag: Sendable {
        private let value = Synchronization.Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }
}

import Synchronization
