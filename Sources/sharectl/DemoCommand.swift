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
        say(
            """
            sharectl demo — a room call on this machine: the room server, a synthetic 1280×720 screen and a
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
        let share: CallSession, watch: CallSession
        do {
            share = try CallSession(options: sharer, loop: loop, logger: logger.child("share"))
            watch = try CallSession(options: viewer, loop: loop, logger: logger.child("watch"))
        } catch {
            await server.stop()
            loop.stop()
            throw ShareFailure(description: "demo: \(error)")
        }
        KeptCalls.keep(share)
        KeptCalls.keep(watch)
        let stop = StopSignal()
        do {
            try await share.start()
            try await watch.start()
        } catch {
            await share.stop()
            await watch.stop()
            await server.stop()
            loop.stop()
            throw ShareFailure(description: "demo: could not join the room: \(error)")
        }
        let started = ContinuousClock.now
        var last = CallStatistics()
        while true {
            try? await Task.sleep(for: .seconds(1))
            let sent = await share.statistics(), seen = await watch.statistics()
            last = seen
            for line in sent.statusLines { say("share │ " + line) }
            for line in seen.statusLines { say("watch │ " + line) }
            if stop.requested { say("Stopping (signal)…"); break }
            if duration > 0, ContinuousClock.now - started >= .milliseconds(Int64(duration * 1000)) { break }
        }
        await watch.stop()
        await share.stop()
        await server.stop()
        loop.stop()
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
}
