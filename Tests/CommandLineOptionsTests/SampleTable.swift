import CommandLineOptions

/// A small program with the shapes a real one has: shared option names, a switch, a repeatable
/// option, defaults, an alias, plain arguments, and words that need quoting in a shell.
enum Sample {
    static let table = CommandTable(
        program: "tool",
        commands: [
            CommandDescription(
                "send", summary: "send something somewhere",
                synopsis: ["--to URL [OPTIONS]"],
                options: [
                    .value("to", "URL", "where to send"),
                    .value("duration", "SECONDS", default: "0", "how long; 0 is for ever"),
                    .choice("policy", ["balanced", "detail", "motion"], default: "balanced", "what to keep"),
                    .value(
                        "source", "SOURCE", default: "synthetic", completion: .words(["synthetic", "portal:window"]),
                        "where it comes from: [a] 'quoted' word"),
                    .value("stats-json", "PATH", completion: .file, "figures each second"),
                    .flag("no-audio", "send no audio"),
                    .flag("verbose", "log each step")
                ]),
            CommandDescription(
                "serve", summary: "serve a room",
                options: [
                    .value("listen", "HOST:PORT", default: "127.0.0.1:8080", "where it listens"),
                    .value("grace", "SECONDS", default: "15", "how long a place is kept"),
                    .value("allow-origin", "ORIGIN", repeatable: true, "another site that may connect"),
                    .flag("verbose", "log each step")
                ]),
            CommandDescription(
                "report", summary: "a report from a stats file", synopsis: ["FILE [--out DIR]"],
                arguments: [.file, .none],
                options: [.value("out", "DIR", completion: .directory, "where it goes")]),
            CommandDescription(
                "check", summary: "check files", synopsis: ["list|run FILE..."],
                arguments: [.words(["list", "run"]), .file],
                options: [.value("out", "DIR", completion: .directory, "where it goes")]),
            CommandDescription("version", aliases: ["--version"], summary: "the version")
        ])
}
