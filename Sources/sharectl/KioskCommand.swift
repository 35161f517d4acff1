import CommandLineOptions
import Foundation
import ShareCore

/// What `sharectl kiosk install` writes: a systemd unit that runs `sharectl share --config FILE`,
/// and that config file from the share options given. Pure: `files` returns paths and texts.
struct KioskUnit: Equatable {
    static let unitName = "sharectl-kiosk.service"

    struct File: Equatable {
        /// Where it goes on the machine (without --root).
        var path: String
        var text: String
        var mode: Int
    }

    enum Scope: Equatable {
        /// A user unit in ~/.config/systemd/user, run by the user's manager in their session.
        case user(home: String)
        /// A system unit in /etc/systemd/system, run as `user`.
        case system(user: String)
    }

    var scope: Scope
    /// The absolute path of the sharectl to run.
    var executable: String
    /// The share's options (long names) as `share --config` takes them; the token file apart.
    var options: [(key: String, value: String)]
    /// `--token-file`: passed as the systemd credential `whip-token`.
    var tokenFile: String?

    static func == (a: KioskUnit, b: KioskUnit) -> Bool {
        a.scope == b.scope && a.executable == b.executable && a.tokenFile == b.tokenFile
            && a.options.map { "\($0.key)=\($0.value)" } == b.options.map { "\($0.key)=\($0.value)" }
    }

    var unitPath: String {
        switch scope {
        case .user(let home): return home + "/.config/systemd/user/" + Self.unitName
        case .system: return "/etc/systemd/system/" + Self.unitName
        }
    }

    var configPath: String {
        switch scope {
        case .user(let home): return home + "/.config/sharectl/kiosk.conf"
        case .system: return "/etc/sharectl/kiosk.conf"
        }
    }

    var config: String {
        var lines = [
            "# sharectl kiosk: the options of `sharectl share`, one `name = value` a line.",
            "# Written by `sharectl kiosk install`; read by \(Self.unitName). The token is not here: it is",
            "# the unit's credential (LoadCredential=whip-token:…)."
        ]
        for (key, value) in options {
            lines.append("\(key) = \(value.contains(" ") || value.contains("#") ? "\"\(value)\"" : value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    var unit: String {
        let system: Bool
        if case .system = scope { system = true } else { system = false }
        var exec = "\(executable) share --config \(configPath)"
        if !options.contains(where: { $0.key == "restore-token-file" }) {
            // The portal's restore token in the unit's own state folder (kept across restarts).
            exec += " --restore-token-file ${STATE_DIRECTORY}/restore-token"
        }
        var service = [
            "Type=notify",
            "NotifyAccess=main",
            "ExecStart=\(exec)",
            "Restart=on-failure",
            "RestartSec=5s",
            // Longer than the share's own mending (keyframe, fresh encoder: about 10 s) and its first
            // reconnect waits: systemd restarts a process that is wedged, not one that is healing.
            "WatchdogSec=60s",
            "TimeoutStartSec=120s",
            "TimeoutStopSec=20s",
            "StateDirectory=sharectl",
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "PrivateTmp=yes",
            "RestrictSUIDSGID=yes",
            "LockPersonality=yes"
        ]
        if let tokenFile { service.append("LoadCredential=whip-token:\(tokenFile)") }
        if case .system(let user) = scope {
            service.insert(
                contentsOf: [
                    "User=\(user)",
                    // The desktop session's bus and PipeWire, found under the user's runtime folder.
                    "Environment=XDG_RUNTIME_DIR=/run/user/%U",
                    "Environment=DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/%U/bus"
                ], at: 0)
        }
        let unitSection =
            system
            ? [
                "Description=sharectl kiosk: this screen shared unattended", "Wants=network-online.target",
                "After=network-online.target"
            ]
            : [
                "Description=sharectl kiosk: this screen shared unattended", "After=graphical-session.target",
                "PartOf=graphical-session.target"
            ]
        let install = system ? "WantedBy=multi-user.target" : "WantedBy=graphical-session.target"
        return
            (["# Written by `sharectl kiosk install`; `sharectl kiosk uninstall` removes it.", "[Unit]"]
            + unitSection + ["", "[Service]"] + service + ["", "[Install]", install]).joined(separator: "\n") + "\n"
    }

    var files: [File] {
        [File(path: configPath, text: config, mode: 0o640), File(path: unitPath, text: unit, mode: 0o644)]
    }

    var enableHint: [String] {
        switch scope {
        case .user:
            return [
                "systemctl --user daemon-reload && systemctl --user enable --now \(Self.unitName)",
                "systemctl --user status \(Self.unitName)   # STATUS: the share's status line",
                "journalctl --user -u \(Self.unitName) -f"
            ]
        case .system:
            return [
                "systemctl daemon-reload && systemctl enable --now \(Self.unitName)",
                "systemctl status \(Self.unitName)   # STATUS: the share's status line",
                "journalctl -u \(Self.unitName) -f"
            ]
        }
    }
}

/// `sharectl kiosk install [--system [--user NAME]] [--root DIR] -- SHARE OPTIONS…` and
/// `sharectl kiosk uninstall [--system] [--root DIR]`.
enum KioskCommand {
    /// Share options that do not belong in a kiosk's file: a secret on a command line or a file
    /// of options naming another.
    static let refused = [
        "token": "give --token-file PATH: it becomes the unit's credential",
        "config": "the kiosk's options are the config file",
        "duration": "a kiosk runs until stopped",
        "stats-json": "a kiosk's figures are its status line (systemctl status) and journal"
    ]

    static func run(_ arguments: Arguments) throws {
        guard let action = arguments.positional.first else {
            throw Arguments.UsageError(description: "kiosk needs install or uninstall (see: sharectl kiosk --help)")
        }
        let root = arguments.value("root").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        let scope = try scope(arguments)
        switch action {
        case "install":
            let unit = try unit(scope: scope, shareWords: Array(arguments.positional.dropFirst()))
            for file in unit.files {
                let path = root + file.path
                try FileManager.default.createDirectory(
                    atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                guard
                    FileManager.default.createFile(
                        atPath: path, contents: Data(file.text.utf8), attributes: [.posixPermissions: file.mode])
                else {
                    throw ShareFailure(description: "could not write \(path)")
                }
                say("Wrote \(path)")
            }
            say("Enable and start it:")
            for line in unit.enableHint { say("  \(line)") }
        case "uninstall":
            guard arguments.positional.count == 1 else {
                throw Arguments.UsageError(description: "kiosk uninstall takes no share options")
            }
            let unit = KioskUnit(scope: scope, executable: "", options: [], tokenFile: nil)
            var removed = 0
            for path in [unit.unitPath, unit.configPath].map({ root + $0 })
            where FileManager.default.fileExists(atPath: path) {
                try FileManager.default.removeItem(atPath: path)
                say("Removed \(path)")
                removed += 1
            }
            if removed == 0 { say("No kiosk unit was installed (\(root + unit.unitPath)).") }
            let reload: String
            if case .system = scope { reload = "systemctl" } else { reload = "systemctl --user" }
            say("If it was running: \(reload) disable --now \(KioskUnit.unitName); \(reload) daemon-reload")
        default:
            throw Arguments.UsageError(
                description: "kiosk takes install or uninstall, not '\(action)' (see: sharectl kiosk --help)")
        }
    }

    static func scope(_ arguments: Arguments) throws(Arguments.UsageError) -> KioskUnit.Scope {
        if arguments.has("system") {
            let user = arguments.value("user") ?? ""
            if arguments.positional.first == "install", user.isEmpty {
                throw Arguments.UsageError(
                    description: "kiosk install --system needs --user NAME: the desktop user whose screen is shared")
            }
            return .system(user: user)
        }
        if arguments.value("user") != nil {
            throw Arguments.UsageError(description: "--user goes with --system (a user unit runs as you)")
        }
        guard let home = ProcessInfo.processInfo.environment["HOME"], home.hasPrefix("/") else {
            throw Arguments.UsageError(description: "kiosk: HOME is not set; give --system --user NAME")
        }
        return .user(home: home)
    }

    /// The unit for these share options, checked as `share` would check them.
    static func unit(scope: KioskUnit.Scope, shareWords: [String]) throws -> KioskUnit {
        guard !shareWords.isEmpty else {
            throw Arguments.UsageError(
                description: "kiosk install needs the share's options after --, e.g. sharectl kiosk install -- "
                    + "--source portal --unattended --whip URL --token-file PATH")
        }
        guard case .run(let share) = try CommandTables.sharectl.parse(["share"] + shareWords),
            let description = CommandTables.sharectl.command(named: "share")
        else {
            throw Arguments.UsageError(description: "kiosk install: the share options ask for help")
        }
        guard share.positional.isEmpty else {
            throw Arguments.UsageError(
                description: "kiosk install: share takes no plain arguments: \(share.positional)")
        }
        var options: [(key: String, value: String)] = []
        for option in description.options {
            if let why = refused[option.name], share.value(option.name) != nil || share.has(option.name) {
                throw Arguments.UsageError(description: "kiosk install: --\(option.name) is not for a kiosk: \(why)")
            }
            if option.name == "token-file" { continue }
            if option.takesValue {
                for value in option.repeatable
                    ? share.values(option.name) : share.value(option.name).map({ [$0] }) ?? []
                {
                    let absolute = option.completion == .file && !value.hasPrefix("/") ? absolutePath(value) : value
                    options.append((option.name, absolute))
                }
            } else if share.has(option.name) {
                options.append((option.name, "true"))
            }
        }
        guard share.value("whip") != nil || share.value("room-file") != nil else {
            throw Arguments.UsageError(
                description: "kiosk install: give --whip URL (with --token-file PATH) or --room-file PATH")
        }
        // Over WHIP a kiosk publishes again when the connection is lost.
        if share.value("whip") != nil, !options.contains(where: { $0.key == "reconnect" }) {
            options.append(("reconnect", "true"))
        }
        let token = share.value("token-file").map { $0.hasPrefix("/") ? $0 : absolutePath($0) }
        return KioskUnit(scope: scope, executable: executablePath(), options: options, tokenFile: token)
    }

    static func absolutePath(_ path: String) -> String {
        FileManager.default.currentDirectoryPath + "/" + path
    }

    /// This sharectl's absolute path (the unit runs the binary that installed it).
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    }
}
