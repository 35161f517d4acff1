import CommandLineOptions

/// Every command of sharectl and its options, declared once: `sharectl --help`, `sharectl COMMAND
/// --help`, the usage errors, the keys a config file may take (`configKeys(for:)`) and
/// `sharectl completion bash|zsh` all come from this table. An option a command reads is in that
/// command's table; one it does not read is refused.
enum CommandTables {
    static let sharectl = CommandTable(
        program: "sharectl",
        commands: [
            demo, share, sources, serve, watch, snapshot, cameraCommand, version, completion, benchWire, benchPipeline,
            diagnose,
            scenario, kiosk
        ])

    /// The keys a config file for `command` may take (`name = value`, named as the long options).
    static func configKeys(for command: String) -> [String]? { sharectl.configKeys(for: command) }

    // MARK: Options several commands share, worded once

    static let verbose = CommandOption.flag("verbose", "log each step (the info level)")
    static let logLevel = CommandOption.choice(
        "log-level", ["trace", "debug", "info", "notice", "warning", "error"],
        default: "warning", "what to log; --verbose is info")
    static let duration = CommandOption.value(
        "duration", "SECONDS", default: "0", "end after this many seconds; 0 runs until Ctrl-C")
    static let statsJSON = CommandOption.value(
        "stats-json", "PATH", completion: .file,
        "write a JSON line of figures each second to this file")
    static let codec = CommandOption.choice(
        "codec", ["h264", "vp8"], "offer only this video codec (default: H.264, then VP8)")
    static let roomFile = CommandOption.value(
        "room-file", "PATH", completion: .file,
        "the room link from this file (else SHARECTL_ROOM_URL)")
    static let room = CommandOption.value(
        "room", "URL", "the room link (others can read a command line in ps: prefer --room-file)")
    static let audioOutput = CommandOption.value(
        "audio-output", "NODE|none", completion: .words(["none"]),
        "where call audio plays (default: the default PipeWire sink)")
    static let snapshotFolder = CommandOption.value(
        "snapshot", "DIR", completion: .directory,
        "save the last picture of each view here as PNG every 5 s")
    static let noAudio = CommandOption.flag("no-audio", "send no audio")
    static let audioBitrate = CommandOption.value(
        "audio-bitrate", "KBPS", default: "64",
        "Opus rate for the audio sent, 16 to 128 kbit/s (64 suits speech; more for a screen's own sound)")
    static let noEchoCancel = CommandOption.flag(
        "no-echo-cancel",
        "with --audio mic: the call's playout does not go through PipeWire's echo canceller (noise suppression stays)")
    static let noNoiseSuppression = CommandOption.flag(
        "no-noise-suppression", "with --audio mic: PipeWire's echo canceller leaves noise in (echo cancellation stays)")
    static let restoreTokenFile = CommandOption.value(
        "restore-token-file", "PATH", completion: .file,
        "where the portal's restore token is kept "
            + "(default: $XDG_STATE_HOME/sharectl/portal-restore-token)")
    static let cameraSource = CommandOption.value(
        "camera", "none|synthetic|auto|DEVICE|synthetic:NAME", default: "none",
        completion: .words(["none", "synthetic", "auto", "synthetic:"]),
        "synthetic: the test pattern; else a camera through the camera director")

    // MARK: The commands

    static let demo = CommandDescription(
        "demo",
        summary: "the built-in default: a room call on this machine (room server, the synthetic screen and a tone "
            + "shared, the built-in viewer beside it) until Ctrl-C",
        options: [
            duration,
            .value(
                "listen", "HOST:PORT", default: "127.0.0.1:0", "where the room server listens; port 0 is any free port"),
            codec,
            .choice("camera", ["none", "synthetic"], default: "none", "the synthetic camera beside the screen"),
            .value(
                "source", "SOURCE", default: "synthetic",
                completion: .words([
                    "synthetic", "portal", "portal:monitor", "portal:window", "portal:virtual", "pipewire:"
                ]),
                "what the demo shares: the synthetic screen, the real screen through the portal, or a PipeWire node"),
            .flag("unattended", "never wait at the portal's picker: restore the saved grant"),
            restoreTokenFile, .flag("no-cursor", "leave the cursor out of a portal capture"),
            verbose, logLevel
        ],
        notes: [
            "It prints both sides' status lines each second and the room link, which a browser on this machine "
                + "can open to join."
        ])

    static let share = CommandDescription(
        "share",
        summary:
            "send the screen to a WHIP endpoint (RFC 9725), into a Janus VideoRoom, or into a room of `sharectl serve`",
        synopsis: [
            "[--source SOURCE] --whip URL [--token-file PATH] [OPTIONS]",
            "--room-file PATH | --room URL [--name NAME] [OPTIONS]",
            "[--source SOURCE] --janus ws://HOST:8188 --janus-room ID [--pin PIN] [--display NAME] [OPTIONS]"
        ],
        options: [
            .value(
                "source", "SOURCE", default: "synthetic",
                completion: .words([
                    "synthetic", "portal", "portal:monitor", "portal:window", "portal:virtual", "pipewire:", "none"
                ]),
                "synthetic, portal[:monitor|:window|:virtual], pipewire:NODE, or none for the camera alone"),
            .value("whip", "URL", "publish to this WHIP endpoint"),
            .value("janus", "URL", "publish into a Janus VideoRoom through this Janus WebSocket (with --janus-room)"),
            .value("janus-room", "ID", "the Janus VideoRoom to publish into"),
            .value("pin", "PIN", "the Janus room's PIN, if it has one"),
            .value("display", "NAME", default: "sharectl", "your name in the Janus room"),
            .flag(
                "simulcast",
                "send the screen as three layers (full, half, a quarter of the size): for an SFU to choose from (the default with --janus), or in a room (the default there) each viewer sent the layer its link carries from encoders shared by all"
            ),
            .flag("no-simulcast", "send the screen as one stream into Janus, or in a room with an encoder per viewer"),
            .value(
                "ice-interface", "NAME|ADDRESS", repeatable: true,
                "offer host candidates on this interface or address besides 127.0.0.1 (default: every interface that is up)"
            ),
            .value(
                "config", "PATH", completion: .file,
                "options from this file, one 'name = value' a line (default: ~/.config/sharectl/share.conf if it exists)"
            ),
            .value("token-file", "PATH", completion: .file, "the WHIP bearer token from this file (else WHIP_TOKEN)"),
            .value(
                "token", "TOKEN", "the WHIP bearer token (others can read a command line in ps: prefer --token-file)"),
            roomFile, room,
            .value("name", "NAME", default: "sharectl", "your name in the room, 1 to 64 characters"),
            codec,
            .value("size", "WxH", "the synthetic screen's size (default: 1920x1080 over WHIP, 1280x720 in a room)"),
            .value("fps", "N", default: "30", "frames per second, 1 to 30"),
            .value(
                "bitrate", "KBPS", "the most the screen may send, in kbit/s (default: 4000 over WHIP, 2000 in a room)"),
            .choice(
                "policy", ["balanced", "detail", "motion"], default: "balanced",
                "what the screen keeps when the link or the machine cannot carry everything"),
            .value(
                "keyframe-interval", "S", default: "10",
                "a keyframe at least every S seconds, whatever the frame rate (1 to 600; WHIP ingest servers often want 1 or 2)"
            ),
            .choice(
                "encoder", ["auto", "x264", "vaapi", "nvenc"], default: "auto",
                "the H.264 encoder; auto takes VA-API or NVENC when one opens, else x264"),
            duration, statsJSON,
            cameraSource.with(
                help: "a camera beside the screen, at most 500 kbit/s and 360 lines; synthetic is a room's test pattern"
            ),
            .value(
                "audio", "synthetic|silence|mic[:NODE]|none", default: "synthetic",
                completion: .words(["synthetic", "silence", "mic", "mic:", "none"]),
                "in a room: the 440 Hz tone, digital silence (a drill), a PipeWire source (mic is the default one), or nothing"
            ),
            audioOutput.with(help: "in a room: where call audio plays (default: the default PipeWire sink)"),
            audioBitrate, noEchoCancel, noNoiseSuppression, noAudio,
            .value(
                "share-for", "SECONDS", default: "0",
                "in a room: stop sharing after this many seconds; the call goes on"),
            snapshotFolder.with(help: "in a room: save the last picture of each view here as PNG every 5 s"),
            .flag(
                "reconnect",
                "publish again when the connection is lost (after 2 s, backing off to once a minute); in a room, keep "
                    + "trying when the room server is gone (without it the share ends after 30 s)"),
            .value("stun", "stun:HOST[:PORT]", "gather through this STUN server"),
            .value(
                "turn", "turn:HOST[:PORT][?transport=udp|tcp]", "gather through this TURN server (with --turn-user)"),
            .value("turn-user", "USER", "the TURN user name"),
            .value("turn-credential-file", "PATH", completion: .file, "the TURN credential from this file"),
            .value("turn-credential", "SECRET", "the TURN credential (others can read a command line in ps)"),
            .flag("relay-only", "connect only through TURN relays, yours or the endpoint's"),
            .flag("unattended", "never wait at the portal's picker: restore the saved grant"),
            restoreTokenFile, .flag("no-cursor", "leave the cursor out of a portal capture"),
            .value(
                "metrics-listen", "HOST:PORT",
                "over WHIP: serve /metrics (Prometheus) and /healthz here, e.g. 127.0.0.1:9464 (loopback unless told)"),
            verbose, logLevel
        ],
        notes: [
            "While it shares, standard input takes one command a line: policy balanced|detail|motion, keyframe, mute,",
            "unmute, stop,",
            "and for drills fault capture-stall|encoder-stall. In a room, SIGUSR1 stops or restarts the share."
        ])

    static let sources = CommandDescription(
        "sources",
        summary:
            "what can be captured here: the portal's version, source types and cursor modes, PipeWire, the restore token",
        options: [restoreTokenFile])

    static let serve = CommandDescription(
        "serve",
        summary: "the room server and its browser client; prints \"Room: <URL>\" first",
        options: [
            .value("listen", "HOST:PORT", default: "127.0.0.1:8080", "where it listens"),
            .value("room", "NAME", default: "demo", repeatable: true, "the room's name (repeat for more rooms)"),
            .value(
                "grace", "SECONDS", default: "15", "how long a participant who dropped keeps their place, 1 to 3600"),
            .value(
                "sfu", "MODE", default: "mesh",
                "mesh (each participant sends to each other) or janus (rooms run on a Janus VideoRoom behind this server)"
            ),
            .value(
                "janus", "URL", repeatable: true,
                "with --sfu janus: use this Janus (ws://HOST:8188) instead of starting one; repeat to place rooms across several"
            ),
            .value(
                "janus-admin-key", "KEY",
                "with --janus: the VideoRoom admin key of those Janus instances, if they have one"),
            .value(
                "janus-interface", "NAME", repeatable: true,
                "with --sfu janus and no --janus: the network interface the Janus started here gathers ICE candidates on"
            ),
            .value("state", "PATH", completion: .file, "keep the room's token and participants here across restarts"),
            .value("tls-cert", "PEM", completion: .file, "serve HTTPS with this certificate (with --tls-key)"),
            .value("tls-key", "PEM", completion: .file, "the certificate's private key"),
            .value(
                "allow-origin", "ORIGIN", repeatable: true,
                "another site whose pages may open the room's WebSocket, e.g. https://example.org"),
            verbose, logLevel
        ],
        notes: [
            "The server's own pages, and clients that send no Origin (sharectl), may always open the WebSocket.",
            "With --sfu janus each room is a Janus VideoRoom (PIN and secret derived from its token), placed on the Janus with the fewest publishers; participants reach Janus only through this server (/janus/ROOM?t=TOKEN), which lets through VideoRoom requests for their own room alone."
        ])

    static let watch = CommandDescription(
        "watch",
        summary: "the built-in viewer: join a room, decode every screen and camera, print figures each second",
        synopsis: [
            "ROOM-URL | --room-file PATH [OPTIONS]",
            "--janus ws://HOST:8188 --janus-room ID [--pin PIN] [--publisher NAME] [OPTIONS]"
        ],
        arguments: [.none],
        options: [
            roomFile, room,
            .value(
                "janus", "URL",
                "watch a publisher of a Janus VideoRoom through this Janus WebSocket (with --janus-room)"),
            .value("janus-room", "ID", "the Janus VideoRoom to watch"),
            .value("pin", "PIN", "the Janus room's PIN, if it has one"),
            .value(
                "publisher", "NAME", "in a Janus room: watch the publisher with this display name (default: the first)"),
            .value(
                "substream", "N",
                "in a Janus room: of a simulcast publisher's layers, watch this one (0 the smallest, 2 the largest; default: the largest)"
            ),
            .value(
                "ice-interface", "NAME|ADDRESS", repeatable: true,
                "offer host candidates on this interface or address besides 127.0.0.1 (default: every interface that is up)"
            ),
            .value("name", "NAME", default: "viewer", "your name in the room, 1 to 64 characters"),
            duration, statsJSON, snapshotFolder, audioOutput,
            .value(
                "audio", "synthetic|silence|mic[:NODE]|none", default: "none",
                completion: .words(["synthetic", "silence", "mic", "mic:", "none"]),
                "what you send as audio: the 440 Hz tone, digital silence (a drill), a PipeWire source, or nothing"),
            noEchoCancel, noNoiseSuppression, cameraSource,
            audioBitrate, codec, noAudio,
            .flag(
                "no-transport-cc",
                "in a room: negotiate no transport-wide congestion feedback, so senders steer by receiver reports, NACKs and loss alone (as with receivers that give none, such as aiortc)"
            ),
            verbose, logLevel
        ],
        notes: [
            "Standard input takes mute and unmute, fault decoder-wedge [NAME], fault decoder-wedge-sticky [NAME] and",
            "fault clear."
        ])

    static let snapshot = CommandDescription(
        "snapshot",
        summary: "draw one frame of the synthetic screen to a PNG file",
        synopsis: ["PATH.png [OPTIONS]"],
        arguments: [.file, .none],
        options: [
            .value("width", "W", default: "1920", "the screen's width"),
            .value("height", "H", default: "1080", "the screen's height"),
            .value("frame", "N", default: "0", "which frame")
        ])

    static let cameraCommand = CommandDescription(
        "camera",
        summary: "the cameras here (list), or the camera director run with every step printed (test)",
        synopsis: ["list [--device ID]", "test [--device ID] [--duration SECONDS]"],
        arguments: [.words(["list", "test"]), .none],
        options: [
            .value(
                "device", "ID", default: "auto", completion: .words(["auto", "synthetic:"]),
                "a stable id, /dev/videoN, a name or synthetic:NAME?FAULTS; several separated by ';'"),
            .value("duration", "SECONDS", default: "10", "test: how long to run"),
            verbose, logLevel
        ])

    static let kiosk = CommandDescription(
        "kiosk",
        summary: "install a share as a systemd service that presents unattended (or remove it)",
        synopsis: [
            "install [--system [--user NAME]] [--root DIR] -- SHARE OPTIONS…",
            "uninstall [--system] [--root DIR]"
        ],
        arguments: [.words(["install", "uninstall"]), .none],
        options: [
            .flag("system", "a system unit in /etc/systemd/system (with --user), not a user unit in ~/.config"),
            .value("user", "NAME", "with --system: the desktop user the share runs as (required)"),
            .value("root", "DIR", completion: .directory, "write under this folder instead of / (to look first)")
        ],
        notes: [
            "The share options after -- go to a config file the unit reads (share --config); --token-file becomes a",
            "systemd credential (LoadCredential=whip-token:PATH), read by the service alone. The unit is Type=notify:",
            "READY once media flows, STATUS the status line, WATCHDOG while media leaves or the link holds it back."
        ])

    static let version = CommandDescription(
        "version", aliases: ["--version"],
        summary: "sharectl's version and the commit it was built from, then the C libraries it links")

    static let completion = CommandDescription(
        "completion",
        summary: "print a shell completion script for bash or zsh",
        synopsis: ["bash|zsh"],
        arguments: [.words(["bash", "zsh"]), .none],
        notes: [
            "bash: source <(sharectl completion bash), or keep it in /usr/share/bash-completion/completions/sharectl",
            "zsh:  keep it as _sharectl in a folder of $fpath, or source <(sharectl completion zsh) after compinit"
        ])

    static let benchWire = CommandDescription(
        "bench-wire",
        summary: "time the wire code on a workload (make bench runs it beside aiortc)",
        synopsis: ["DIR"],
        arguments: [.directory, .none])

    static let benchPipeline = CommandDescription(
        "bench-pipeline",
        summary: "time convert → encode → packetize → SRTP protect on 1920×1080 synthetic frames (make bench)",
        synopsis: ["FRAMES.bgrx [OPTIONS]"],
        arguments: [.file, .none],
        options: [
            .value("frames", "N", default: "180", "how many frames, 10 to 3000"),
            .value("bitrate", "KBPS", default: "2500", "the encoder's bitrate, 100 to 50000"),
            .choice("codec", ["h264", "vp8"], default: "h264", "the encoder"),
            .choice("content", ["screen", "camera"], default: "screen", "what the encoder is tuned for"),
            .flag("no-write", "the frames file is already there from a run with at least as many frames")
        ],
        notes: ["The frames are also written to FRAMES.bgrx, for GStreamer to encode the same."])

    static let diagnose = CommandDescription(
        "diagnose",
        summary: "a report (report.txt) and a plot (plot.svg) of a share's life from its --stats-json file",
        synopsis: ["STATS.jsonl [--out DIR]"],
        arguments: [.file, .none],
        options: [
            .value("out", "DIR", completion: .directory, "where to write them (default: STATS.diagnose beside it)")
        ])

    static let scenario = CommandDescription(
        "scenario",
        summary: "check fault scenario files (Scenarios/*.json), or run one and judge its expectations",
        synopsis: [
            "check FILE...", "run FILE [--out DIR] [--param NAME=VALUE]... [--sfu janus [--janus-interface IF]]"
        ],
        arguments: [.words(["check", "run"]), .file],
        options: [
            .value(
                "out", "DIR", completion: .directory,
                "run: where each process's log, --stats-json and the timeline go (default: a new temporary folder)"),
            .value(
                "param", "NAME=VALUE", repeatable: true,
                "run: set a scenario parameter (several: NAME=VALUE,NAME=VALUE)"),
            .value(
                "sfu", "mesh|janus",
                "run: the room's media on Janus (serve --sfu janus) or a mesh, whatever the file says"),
            .value(
                "janus-interface", "IF", completion: .none,
                "run: the interface Janus and the participants gather on (Janus ignores loopback)")
        ],
        notes: ["run exits 1 when an expectation failed. A scenario that shapes the link needs root."])
}

extension CommandOption {
    /// The same option with other words of help.
    func with(help: String) -> CommandOption {
        var copy = self
        copy.help = help
        return copy
    }
}
