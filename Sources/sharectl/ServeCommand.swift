import CallsServer
import Foundation
import GLibLoop
import ShareCore
import RoomProtocol

/// `sharectl serve --listen HOST:PORT --room NAME... [--grace S] [--state PATH]
/// [--tls-cert PEM --tls-key PEM] [--allow-origin ORIGIN]... [--sfu mesh|janus [--janus URL]... [--janus-interface IF]]`:
/// the room server and its browser client. It prints `Room: <invite link>` for each room; it runs
/// until SIGINT or SIGTERM. With `--sfu janus` rooms run on Janus (one it starts, or those given).
enum ServeCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        let listen = arguments.valueOrDefault("listen")
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw Arguments.UsageError(description: "--listen wants HOST:PORT (e.g. 127.0.0.1:8080), not '\(listen)'")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var roomNames = arguments.values("room")
        if roomNames.isEmpty { roomNames = [arguments.valueOrDefault("room")] }
        guard Set(roomNames).count == roomNames.count else {
            throw Arguments.UsageError(description: "--room names each room once")
        }
        guard roomNames.count == 1 || arguments.value("state") == nil else {
            throw Arguments.UsageError(description: "--state keeps one room: give one --room with it")
        }
        let sfu = arguments.valueOrDefault("sfu")
        guard ["mesh", "janus"].contains(sfu) else {
            throw Arguments.UsageError(description: "--sfu wants mesh or janus, not '\(escapedForLog(sfu))'")
        }
        let janusURLs = arguments.values("janus")
        if sfu == "mesh" {
            for option in ["janus", "janus-admin-key", "janus-interface"] where arguments.value(option) != nil {
                throw Arguments.UsageError(description: "--\(option) is for rooms on Janus: add --sfu janus")
            }
        }
        for url in janusURLs where !(url.hasPrefix("ws://") || url.hasPrefix("wss://")) {
            throw Arguments.UsageError(
                description: "--janus wants Janus's WebSocket address, ws://HOST:8188, not '\(redactedURL(url))'")
        }
        if !janusURLs.isEmpty, arguments.value("janus-interface") != nil {
            throw Arguments.UsageError(
                description: "--janus-interface is for the Janus serve starts itself, not with --janus")
        }
        let grace = try arguments.double("grace")
        guard grace >= 1, grace <= 3600 else { throw Arguments.UsageError(description: "--grace is 1 to 3600 seconds") }
        let certificate = arguments.value("tls-cert"), key = arguments.value("tls-key")
        guard (certificate == nil) == (key == nil) else {
            throw Arguments.UsageError(description: "--tls-cert and --tls-key go together")
        }
        let origins = arguments.values("allow-origin")
        for origin in origins {
            guard let url = URL(string: origin), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil,
                url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
            else {
                throw Arguments.UsageError(
                    description:
                        "--allow-origin wants a web origin such as https://example.org (scheme, host and port only), not '\(escapedForLog(origin))'"
                )
            }
        }
        var configuration = RoomServerConfiguration(
            host: host, port: port, tlsCertificatePath: certificate, tlsKeyPath: key,
            limits: RoomLimits(grace: .milliseconds(Int64(grace * 1000))),
            allowedOrigins: origins)
        configuration.limits.grace = .milliseconds(Int64(grace * 1000))

        let user = UserRequests().takeStopSignals()
        let client = try ClientFiles.bundled()
        let loop = ProcessLoop.shared
        var ownJanus: JanusProcess?
        var janusRooms: JanusRooms?
        if sfu == "janus" {
            if janusURLs.isEmpty {
                // Said on standard error: the first line out is `Room: <URL>`, which scripts read.
                StandardError.write("sharectl: starting Janus for the rooms…\n")
                do {
                    ownJanus = try await JanusProcess.start(
                        iceInterfaces: arguments.values("janus-interface"), loop: loop, logger: logger.child("janus"))
                } catch {
                    loop.stop()
                    throw ShareFailure(description: "\(error)")
                }
            }
            let key = arguments.value("janus-admin-key")
            janusRooms = JanusRooms(
                instances: ownJanus.map { [JanusRooms.Instance(url: $0.url, adminKey: $0.adminKey)] }
                    ?? janusURLs.map { JanusRooms.Instance(url: $0, adminKey: key) },
                loop: loop, logger: logger.child("janus"))
        }
        let server = RoomServer(loop: loop, client: client, janus: janusRooms, logger: logger.child("server"))
        var invites: [String] = []
        var placed: [String] = []
        do {
            _ = try await server.start(configuration)
            for name in roomNames {
                invites.append(try await server.addRoom(named: name, stateFile: arguments.value("state")))
                if let placement = await server.placement(ofRoom: name) {
                    placed.append(
                        "Room \(name) runs on Janus at \(redactedURL(placement.instance)) (VideoRoom \(placement.room))."
                    )
                }
            }
        } catch {
            await server.stop()
            await ownJanus?.stop()
            loop.stop()
            throw error
        }
        for invite in invites { say("Room: \(invite)") }
        for line in placed { say(line) }
        if let ownJanus {
            say(
                "Janus was started for the rooms (pid \(ownJanus.pid), its files in \(ownJanus.directory)); only this server reaches it."
            )
        }
        say(
            "Open the link in a browser, or give it to `sharectl share --room` or `sharectl watch`. Ctrl-C stops the server."
        )
        // Janus going away on its own is said at once, and its folder (its log, a core) is kept.
        let janusEnded = Locked(false)
        let janusWatch = ownJanus.map { janus in
            Task {
                guard let how = await janus.unexpectedExit() else { return }
                janusEnded.withLock { $0 = true }
                logger.error("janus (pid \(janus.pid)) has exited: \(how)")
                StandardError.write(
                    "sharectl: the rooms' Janus (pid \(janus.pid)) has exited (\(how)); its log: \(janus.directory)/janus.log. "
                        + "Its rooms carry no media until the server is started again.\n")
            }
        }
        for await request in user.requests where request == .stopSignal { break }
        say("Stopping the room server…")
        await server.stop()
        if let ownJanus {
            await ownJanus.stop()
            await janusWatch?.value
            if janusEnded.withLock({ $0 }) {
                say("Janus's files are kept in \(ownJanus.directory).")
            } else {
                try? FileManager.default.removeItem(atPath: ownJanus.directory)
            }
        }
        loop.stop()
    }
}
