import CallsClient
import Foundation
import ShareCore

/// `sharectl watch ROOM-URL|--room-file PATH|$SHARECTL_ROOM_URL [--name NAME] [--duration S] [--stats-json PATH] [--snapshot DIR]
/// [--audio-output NODE|none]`:
/// the built-in viewer. Joins the room as a receiver (sends no media), decodes every screen and
/// camera, sends the same `media` reports the browser client does, prints per-participant figures
/// each second and, with --snapshot, saves the last decoded picture of each view as PNG every 5 s.
enum WatchCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        guard let invite = try SecretArguments.roomLink(arguments, positional: arguments.positional.first) else {
            throw Arguments.UsageError(
                description: "watch needs the room link: --room-file PATH (a file holding "
                    + "http://HOST:PORT/r/ROOM?t=TOKEN), SHARECTL_ROOM_URL, or the link itself")
        }
        var plain = arguments
        if plain.value("camera") == nil { plain.set("camera", "none") }
        let options = try RoomOptions.parse(plain, invite: invite)
        say(
            "Watching \(redactedURL(invite)) as \(options.name) (call audio plays through PipeWire when there is an output, "
                + "else it is counted; the stats' audioOutput says which)…")
        try await RoomRun.run(options: options, arguments: arguments, logger: logger)
    }
}
