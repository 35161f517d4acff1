import CommandLineOptions
import Foundation
import ShareCore

/// `share`'s options from a file (`ConfigFile`): `--config PATH`, else
/// `$XDG_CONFIG_HOME/sharectl/share.conf` (`~/.config/sharectl/share.conf`) when it exists. The
/// command line overrides it. A kiosk keeps its options there, and its token in a file of its own
/// (`token-file`) or a systemd credential, never in the config file or on the command line.
enum ShareConfig {
    /// Keys a config file may not hold, and why.
    static let refused = [
        "config": "a config file cannot name another",
        "token": "put the token in a file of its own (token-file = PATH, mode 0600) or WHIP_TOKEN",
        "turn-credential": "put it in a file of its own (turn-credential-file = PATH)",
        "room": "put the room link in a file of its own (room-file = PATH): it carries the room's token"
    ]

    /// The default path: `$XDG_CONFIG_HOME/sharectl/share.conf`, else under `$HOME/.config`.
    static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") { return base + "/sharectl/share.conf" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/sharectl/share.conf"
    }

    /// The config file for this command line: none for a command other than `share`, or when
    /// no `--config` is given and the default path does not exist.
    static func file(for arguments: Arguments) throws(Arguments.UsageError) -> ConfigFile? {
        guard arguments.command == "share",
            let command = CommandTables.sharectl.command(named: "share")
        else { return nil }
        let path: String
        if let given = arguments.value("config") {
            path = given
        } else if let fallback = defaultPath(), FileManager.default.fileExists(atPath: fallback) {
            path = fallback
        } else {
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let why = FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "there is no such file"
            throw Arguments.UsageError(description: "--config: cannot read \(path): \(why)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Arguments.UsageError(description: "--config: \(path) is not UTF-8 text")
        }
        return try ConfigFile(text: text, path: path, command: command, refused: refused)
    }

    /// The command line parsed again with the file's options before its own.
    static func arguments(from file: ConfigFile, words: [String]) throws(Arguments.UsageError) -> Arguments {
        guard let name = words.first, let command = CommandTables.sharectl.command(named: name) else {
            throw Arguments.UsageError(description: "no command")
        }
        let merged = [name] + file.words(before: Array(words.dropFirst()), command: command)
        do throws(Arguments.UsageError) {
            guard case .run(let arguments) = try CommandTables.sharectl.parse(merged) else {
                throw Arguments.UsageError(description: "\(file.path): the options ask for help")
            }
            return arguments
        } catch {
            throw file.locate(error, commandLine: Array(words.dropFirst()))
        }
    }
}
