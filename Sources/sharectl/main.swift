import Foundation
import ShareCore
import RoomProtocol

/// sharectl — share a Linux screen into calls. Each command is one function; `help` lists them.

// A reader that goes away (`sharectl serve | head -1`) makes a write fail with EPIPE, never ends
// the process: SIGPIPE is ignored process-wide, before anything is written.
signal(SIGPIPE, SIG_IGN)

let usage = """
    usage: sharectl COMMAND [OPTIONS]

    commands:
      demo                      the built-in default: a room call on this machine (room server,
                                the synthetic screen and a tone shared, the built-in viewer beside
                                it, live status lines, the room link for a browser) until Ctrl-C
                                [--duration SECONDS] [--listen HOST:PORT] [--codec h264|vp8]
                                [--camera none|synthetic]
      version                   the C libraries this build links, with their versions
      share --source synthetic --whip URL
                                send the synthetic screen and a tone to a WHIP endpoint (RFC 9725)
                                [--token-file PATH] (or WHIP_TOKEN; --token TOKEN works but
                                other users can read it in ps) [--codec h264|vp8] [--duration SECONDS]
                                [--stats-json PATH] [--size WxH] [--fps N] [--bitrate MAX-KBPS]
                                [--policy balanced|detail|motion] [--encoder auto|x264|vaapi|nvenc]
                                [--no-audio] [--relay-only] [--verbose]
                                [--reconnect] (a connection lost is published again: a new WHIP
                                session after 2 s, backing off to once a minute; a portal reopened
                                by its restore token)
                                [--camera auto|DEVICE|synthetic:NAME] (a camera through the camera
                                director, on a video track beside the screen at most 500 kbit/s and
                                360 lines; with --source none the camera alone)
                                [--stun stun:HOST[:PORT]] [--turn turn:HOST[:PORT][?transport=udp|tcp]
                                 --turn-user USER --turn-credential-file PATH (or --turn-credential SECRET)]
                                (--relay-only: connect only through TURN relays, yours or the ones
                                the endpoint names in its Link headers; while sharing, type
                                "policy balanced|detail|motion", "keyframe", "stop", or for a drill
                                "fault capture-stall|encoder-stall" on stdin)
      share --source portal[:window|:virtual] | --source pipewire:NODE  (with the options above)
                                capture the screen through xdg-desktop-portal (PipeWire), or any
                                PipeWire video node [--unattended] [--restore-token-file PATH]
                                [--no-cursor] (--unattended never waits at a picker: it restores the
                                saved grant, by default $XDG_STATE_HOME/sharectl/portal-restore-token)
      sources                   what can be captured here: the portal's version, source types and
                                cursor modes, PipeWire, the restore token [--restore-token-file PATH]
      serve --listen HOST:PORT --room NAME
                                the room server and its browser client; prints "Room: <URL>" first
                                [--grace SECONDS] (default 15) [--state PATH] (keeps the room's
                                token and participants across restarts) [--tls-cert PEM --tls-key PEM]
                                [--allow-origin ORIGIN] (repeatable: another site whose pages may open
                                the room's WebSocket, e.g. https://example.org; the server's own pages
                                and clients that send no Origin, such as sharectl, always may)
      share --room-file PATH --name NAME
                                share the synthetic screen into a room of `sharectl serve`; the
                                room link comes from the file, SHARECTL_ROOM_URL, or --room URL
                                (a link on the command line can be read by other users in ps)
                                [--camera none|synthetic|auto|DEVICE|synthetic:NAME] [--audio synthetic|mic[:NODE]|none]
                                [--duration S] [--stats-json PATH] [--size WxH] [--fps N] [--share-for S]
                                (synthetic: the synthetic pattern; a camera goes through the camera
                                director; either is capped at 500 kbit/s and 360 lines while the
                                screen is shared)
                                (SIGUSR1 stops or restarts the share; the call goes on; stdin takes
                                `fault capture-stall|encoder-stall`, `keyframe`, `stop`)
                                --audio: the 440 Hz tone (synthetic, the default), the default
                                PipeWire source (mic) or a named node (mic:NODE), or nothing;
                                the microphone is only used when asked for
                                [--audio-output NODE|none] where call audio plays (default: the
                                default PipeWire sink; counted when there is none)
      watch ROOM-URL | --room-file PATH (or SHARECTL_ROOM_URL)
                                the built-in viewer: join, decode every screen and camera, print
                                figures each second [--name NAME] [--duration S]
                                [--stats-json PATH] [--snapshot DIR] [--audio-output NODE|none]
                                (stdin takes `fault decoder-wedge [NAME]`,
                                `fault decoder-wedge-sticky [NAME]`, `fault clear`)
      snapshot PATH.png         draw one frame of the synthetic screen to a PNG file
                                [--width W --height H --frame N]
      camera list               the cameras here (V4L2), their formats (* = the one chosen) and ids
      camera test [--device ID] [--duration S]
                                run the camera director and print the chosen format, the frame
                                rate each second and every step; ID is a stable id, /dev/videoN,
                                a name, or synthetic:NAME?FAULTS (several separated by ';')
      bench-wire DIR            time the wire code on a workload (make bench runs it beside aiortc)
      bench-pipeline FRAMES.bgrx
                                time convert → encode → packetize → SRTP protect on 1920×1080
                                synthetic frames, also written to FRAMES.bgrx for GStreamer
                                (make bench) [--frames N] [--bitrate KBPS] [--codec h264|vp8]
                                [--content screen|camera] [--no-write] (the file is already there
                                from a run with at least as many frames)
      diagnose STATS.jsonl      a report (report.txt) and a plot (plot.svg) of a share's life from its
                                --stats-json file [--out DIR] (default: STATS.diagnose beside it)
      scenario check FILE...    validate fault scenario files (Scenarios/*.json)
      scenario run FILE         run a fault scenario: start what it names, put its faults in, print
                                a timeline and judge its expectations (exit 1 if one failed)
                                [--out DIR] [--param NAME=VALUE] (link faults need root)
      help                      this text
    """

let valueFlags: Set<String> = ["duration", "width", "height", "frame", "codec", "source", "whip", "token", "room",
                               "stats-json", "size", "fps", "bitrate", "name", "log-level", "stun", "turn",
                               "turn-user", "turn-credential", "policy", "encoder", "out", "listen", "grace", "state",
                               "tls-cert", "tls-key", "restore-token-file", "token-file", "turn-credential-file", "room-file", "device", "camera", "frames", "content",
                               "audio", "snapshot", "share-for", "audio-output", "param", "allow-origin"]
let switchFlags: Set<String> = ["no-audio", "verbose", "quiet", "relay-only", "unattended", "no-cursor", "no-write",
                                "reconnect"]

do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()), valueFlags: valueFlags, switchFlags: switchFlags)
    switch arguments.command {
    case "version", "--version": try VersionCommand.run(arguments)
    case "snapshot": try SnapshotCommand.run(arguments)
    case "demo": try await DemoCommand.run(arguments, logger: makeLogger(arguments, label: "demo"))
    case "bench-wire": try BenchCommand.run(arguments)
    case "bench-pipeline": try await BenchPipelineCommand.run(arguments)
    case "diagnose": try DiagnoseCommand.run(arguments)
    case "scenario": try await ScenarioCommand.run(arguments)
    case "share": try await ShareCommand.run(arguments, logger: makeLogger(arguments, label: "share"))
    case "watch": try await WatchCommand.run(arguments, logger: makeLogger(arguments, label: "watch"))
    case "serve": try await ServeCommand.run(arguments, logger: makeLogger(arguments, label: "serve"))
    case "sources": try await ScenarioRunCommand.onThread { Result { try SourcesCommand.run(arguments) } }.get()  // GDBus waits
    case "camera": try await CameraCommand.run(arguments, logger: makeLogger(arguments, label: "camera"))
    case "help", "--help", "-h": say(usage)
    default:
        StandardError.write("sharectl: unknown command '\(arguments.command)'\n\(usage)\n")
        leave(2)
    }
    leave(0)
} catch let error as Arguments.UsageError {
    StandardError.write("sharectl: \(error.description)\n")
    leave(2)
} catch {
    StandardError.write("sharectl: \(error)\n")
    leave(1)
}

/// Ends the process once a command has stopped what it started (media, connections, loops, files
/// written and closed; all output here is unbuffered): `_exit`, not `exit`. `exit` runs the C
/// libraries' exit-time cleanup (OpenSSL, GLib, PipeWire) while threads they own may still be
/// winding down, and twice in gate runs that ended with glibc's heap-corruption abort after a
/// share had ended cleanly.
func leave(_ code: Int32) -> Never {
    _exit(code)
}

/// Only the command line decides log levels: warnings by default, `--verbose` for info, or
/// `--log-level trace|debug|info|notice|warning|error`.
func makeLogger(_ arguments: Arguments, label: String) -> Logger {
    var level: Logger.Level = arguments.has("verbose") ? .info : .warning
    if let name = arguments.value("log-level"), let chosen = Logger.Level.allCases.first(where: { $0.description == name }) {
        level = chosen
    }
    return Logger(label: label, level: level)
}

/// Writes a line to standard output at once (unbuffered), so status lines reach pipes and logs
/// as they happen.
func say(_ text: String) {
    StandardOutput.write(text + "\n")
}
