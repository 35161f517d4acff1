import CallsServer
import Foundation
import GLibLoop
import ShareCore
import RoomProtocol

/// `sharectl serve --listen HOST:PORT --room NAME [--grace S] [--state PATH]
/// [--tls-cert PEM --tls-key PEM] [--allow-origin ORIGIN]...`: the room server and its browser client. The first line it
/// prints is `Room: <invite link>`; it runs until SIGINT or SIGTERM.
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
        let roomName = arguments.valueOrDefault("room")
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
        let server = RoomServer(loop: loop, client: client, logger: logger.child("server"))
        let invite: String
        do {
            _ = try await server.start(configuration)
            invite = try await server.addRoom(named: roomName, stateFile: arguments.value("state"))
        } catch {
            loop.stop()
            throw error
        }
        say("Room: \(invite)")
        say(
            "Open the link in a browser, or give it to `sharectl share --room` or `sharectl watch`. Ctrl-C stops the server."
        )
        for await request in user.requests where request == .stopSignal { break }
        say("Stopping the room server…")
        await server.stop()
        loop.stop()
    }
}
