import CallsClient
import Foundation
import ShareCore
import Signalling

/// `sharectl watch ROOM-URL|--room-file PATH|$SHARECTL_ROOM_URL [--name NAME] [--duration S] [--stats-json PATH] [--snapshot DIR]
/// [--audio-output NODE|none]`:
/// the built-in viewer. Joins the room as a receiver (sends no media), decodes every screen and
/// camera, sends the same `media` reports the browser client does, prints per-participant figures
/// each second and, with --snapshot, saves the last decoded picture of each view as PNG every 5 s.
enum WatchCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        if arguments.value("janus") != nil { return try await JanusWatchCommand.run(arguments, logger: logger) }
        guard let invite = try SecretArguments.roomLink(arguments, positional: arguments.positional.first) else {
            throw Arguments.UsageError(
                description: "watch needs the room link: --room-file PATH (a file holding "
                    + "http://HOST:PORT/r/ROOM?t=TOKEN), SHARECTL_ROOM_URL, or the link itself")
        }
        // A room on Janus (`serve --sfu janus`): watched like any Janus room, through the server.
        let target: JanusTarget?
        do {
            target = try await RoomSFU.janusTarget(
                invite: invite, display: nil, loop: ProcessLoop.shared, logger: logger)
        } catch {
            throw ShareFailure(description: "could not join the room: \(error)")
        }
        if let target {
            // The room's own socket beside Janus: our reports of the screen, the sharer's repairs.
            let room: JanusRoomPresence
            do {
                room = try JanusRoomPresence(
                    invite: invite, name: arguments.valueOrDefault("name"), loop: ProcessLoop.shared, logger: logger)
                try await room.start()
            } catch {
                throw ShareFailure(description: "could not join the room: \(error)")
            }
            return try await JanusWatchCommand.run(arguments, logger: logger, target: target, room: room)
        }
        for option in ["janus-room", "pin", "publisher", "substream"] where arguments.value(option) != nil {
            throw Arguments.UsageError(
                description:
                    "--\(option) is for a Janus room: add --janus URL --janus-room ID, or watch a room on Janus")
        }
        var plain = arguments
        if plain.value("camera") == nil { plain.set("camera", "none") }
        var options = try RoomOptions.parse(plain, invite: invite)
        options.transportFeedback = !arguments.has("no-transport-cc")
        say(
            "Watching \(redactedURL(invite)) as \(options.name) (call audio plays through PipeWire when there is an output, "
                + "else it is counted; the stats' audioOutput says which)…")
        try await RoomRun.run(options: options, arguments: arguments, logger: logger)
    }
}

/// `sharectl watch --janus URL --janus-room ID [--pin PIN] [--publisher NAME] [--duration S]
/// [--stats-json PATH] [--ice-interface NAME|ADDRESS]`: watches one publisher of an existing Janus
/// VideoRoom and prints what it decodes each second, until the duration, a signal, or Janus ends it.
enum JanusWatchCommand {
    /// `target`: a room of `sharectl serve` on Janus (else `--janus` and `--janus-room` say where).
    static func run(
        _ arguments: Arguments, logger: Logger, target roomTarget: JanusTarget? = nil, room: JanusRoomPresence? = nil
    ) async throws {
        let target = try roomTarget ?? ShareCommand.janusTarget(arguments, display: nil)!
        var options = JanusWatchSession.Options(target: target)
        options.room = room
        options.publisher = arguments.value("publisher")
        if arguments.value("substream") != nil {
            let substream = try arguments.int("substream")
            guard (0...2).contains(substream) else {
                throw Arguments.UsageError(description: "--substream is 0 (the smallest layer), 1 or 2 (the largest)")
            }
            options.substream = substream
        }
        options.iceInterfaces = arguments.values("ice-interface")
        let duration = try arguments.double("duration")
        let output = try RoomRun.openStats(arguments.value("stats-json")).map(StatsOutput.init)
        defer { output?.close() }
        let stop = Latch()
        let loop = ProcessLoop.shared
        defer { loop.stop() }
        let session = JanusWatchSession(options: options, loop: loop, logger: logger)
        say(
            "Watching room \(target.room) of Janus at \(redactedURL(target.url))\(options.publisher.map { " (\($0))" } ?? "")…"
        )
        let publisher: String
        do {
            publisher = try await session.start()
        } catch {
            await room?.leave()
            throw ShareFailure(description: "could not watch: \(error)")
        }
        say("Watching \(publisher).")
        // Signals and typed lines: `stop`, and the decoder drills (`fault decoder-wedge`,
        // `fault decoder-wedge-sticky`, `fault clear`).
        let user = UserRequests().takeStopSignals().readStandardInput()
        let commands = Task {
            for await request in user.requests {
                switch request {
                case .stopSignal, .command(.stop):
                    stop.open()
                case .command(.fault(.decoderWedge(_, let sticky))):
                    say(await session.setDecoderWedged(true, sticky: sticky))
                case .command(.fault(.clear)):
                    say(await session.setDecoderWedged(false))
                case .complaint(let text):
                    say("sharectl: \(text)")
                case .command, .toggleSignal:
                    say(
                        "sharectl: a Janus watch takes stop, fault decoder-wedge, fault decoder-wedge-sticky and fault clear"
                    )
                }
            }
        }
        defer { commands.cancel() }
        let began = ContinuousClock.now
        var failure: String?
        while !stop.isOpen {
            if duration > 0, ContinuousClock.now - began >= .milliseconds(Int64(duration * 1000)) { break }
            try? await Task.sleep(for: .seconds(1))
            let figures = await session.figures()
            say(figures.statusLine)
            output?.write(figures.jsonLine { StandardError.write("sharectl: --stats-json: \($0)\n") })
            if let reason = await session.endReason() {
                failure = reason
                break
            }
        }
        await session.stop()
        await room?.leave()
        if let failure { throw ShareFailure(description: "the watch ended: \(failure)") }
        say("Stopped watching; left the Janus room.")
    }
}
