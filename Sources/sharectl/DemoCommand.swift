import CallsClient
import CallsServer
import Foundation
import GLibLoop
import ShareCore
import VideoSend
import RoomProtocol

/// `sharectl demo`: the built-in default, a room call on this machine. It starts the room server
/// (`sharectl serve`) in this process on loopback, shares the synthetic screen and a 440 Hz tone
/// into the room as "sharectl", and runs the built-in viewer (`sharectl watch`) beside it as
/// "viewer", with both sides' live status lines each second and the room link for a browser.
/// Runs until Ctrl-C (or `--duration S`), then both leave and the server stops.
enum DemoCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        let duration = try arguments.double("duration")
        let listen = arguments.valueOrDefault("listen")
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw Arguments.UsageError(description: "--listen wants HOST:PORT (e.g. 127.0.0.1:8080), not '\(listen)'")
        }
        let client: ClientFiles
        do { client = try ClientFiles.bundled() } catch {
            throw ShareFailure(description: "demo: the browser client's files are missing: \(error)")
        }
        let loop = ProcessLoop.shared
        let server = RoomServer(loop: loop, client: client, logger: logger.child("server"))
        let invite: String
        do {
            _ = try await server.start(RoomServerConfiguration(host: String(listen[..<colon]), port: port))
            invite = try await server.addRoom(named: "demo")
        } catch {
            loop.stop()
            throw ShareFailure(description: "demo: the room server could not start: \(error)")
        }
        // `--source portal` shares the real screen: opened (and granted) before anything joins.
        let capture = try CaptureSourceArguments.make(
            arguments.valueOrDefault("source"), arguments, loop: loop, logger: logger)
        defer { capture?.stop() }
        if let capture {
            do {
                try await capture.prepare()
            } catch {
                await server.stop()
                loop.stop()
                throw ShareFailure(description: "demo: could not open the screen: \(error)")
            }
        }
        let screen = capture.map(CaptureSourceArguments.describe) ?? "a synthetic 1280×720 screen"
        say(
            """
            sharectl demo — a room call on this machine: the room server, \(screen) and a
            440 Hz tone shared into the room by "sharectl", and the built-in viewer "viewer" decoding them
            (ICE, DTLS-SRTP, H.264 and Opus; the viewer plays the call's audio through PipeWire when there is an
            output, else it counts it).

            Room: \(invite)
            Open the link in a browser on this machine to join the call. \
            \(duration > 0 ? "It ends after \(Int(duration)) s or on Ctrl-C." : "Ctrl-C ends it.")

            """)
        var sharer = CallSession.Options(invite: invite, name: "sharectl")
        sharer.shareScreen = true
        sharer.audio = .synthetic
        sharer.camera = arguments.valueOrDefault("camera") == "synthetic" ? .synthetic : .none
        if let codec = arguments.value("codec") {
            guard let parsed = VideoCodec(argument: codec) else {
                throw Arguments.UsageError(description: "--codec wants h264 or vp8, not '\(codec)'")
            }
            sharer.codec = parsed
        }
        let viewer = CallSession.Options(invite: invite, name: "viewer")
        func controller(_ options: CallSession.Options, _ name: String) -> ShareController {
            var configuration = ShareController.Configuration(destination: .room(options))
            if options.shareScreen { configuration.capture = capture }
            configuration.duration = duration > 0 ? .milliseconds(Int64(duration * 1000)) : nil
            let made = ShareController(configuration: configuration, loop: loop, logger: logger.child(name))
            KeptControllers.keep(made)
            return made
        }
        let share = controller(sharer, "share"), watch = controller(viewer, "watch")
        let user = UserRequests().takeStopSignals()
        let requests = user.requests
        let seen = Locked(CallStatistics())
        // The viewer joins once the sharer is in the room (or could not get in).
        let sharerIn = Latch()
        // Both sides and the signals, as one group: a side that ends (its time is up, or it
        // failed) ends the other; the signals' child is cancelled once both have.
        enum Ended: Sendable { case side(failure: String?), signals }
        let failures = await withTaskGroup(of: Ended.self) { group in
            group.addTask {
                defer { sharerIn.open() }
                return .side(failure: await Self.run(share, "share │ ", thenStop: watch) { _ in sharerIn.open() })
            }
            group.addTask {
                await sharerIn.wait()
                return .side(
                    failure: await Self.run(watch, "watch │ ", thenStop: share) { stats in seen.withLock { $0 = stats }
                    })
            }
            group.addTask {
                for await request in requests where request == .stopSignal {
                    say("Stopping (signal)…")
                    share.stop()
                    watch.stop()
                    break
                }
                return .signals
            }
            var failures: [String] = []
            var sidesEnded = 0
            for await ended in group {
                guard case .side(let failure) = ended else { continue }
                if let failure { failures.append(failure) }
                sidesEnded += 1
                if sidesEnded == 2 { group.cancelAll() }
            }
            return failures
        }
        await server.stop()
        capture?.stop()  // the portal session closes through the loop: before it stops
        loop.stop()
        if let failure = failures.first { throw ShareFailure(description: "demo: \(failure)") }
        let last = seen.withLock { $0 }
        if let peer = last.peers.first(where: { $0.name == "sharectl" }) {
            let screen = peer.screen, audio = peer.audio
            say(
                """

                The viewer decoded \(screen?.framesDecoded ?? 0) frames of the screen at \(screen?.width ?? 0)×\(screen?.height ?? 0) \
                (\(screen?.freezes ?? 0) freezes) and \(audio?.samplesDecoded ?? 0) samples of Opus at \
                \(Int((audio?.levelDbfs ?? -120).rounded())) dBFS. The room is closed.
                """)
        } else {
            say("\nThe viewer saw no one; the room is closed.")
        }
    }

    /// Runs one side until it ends, saying what it tells and handing each second's figures to
    /// `figures`; then stops the other side. Returns why it failed, if it did.
    static func run(
        _ side: ShareController, _ prefix: String, thenStop other: ShareController,
        figures: @escaping @Sendable (CallStatistics) -> Void
    ) async -> String? {
        defer { other.stop() }
        do {
            _ = try await side.run { event in
                if case .call(let stats) = event { figures(stats) }
                tell(event, prefix: prefix)
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Each second's status lines and the notices, behind the side's prefix.
    static func tell(_ event: ShareController.Event, prefix: String) {
        switch event {
        case .call(let stats): for line in stats.statusLines { say(prefix + line) }
        case .notice(let text): say(prefix + text)
        case .published, .stats, .publishingFailed, .connectionLost: break
        }
    }
}
