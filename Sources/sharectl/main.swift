import CommandLineOptions
import Foundation
import ShareCore
import RoomProtocol
import WebRTCTransport

/// sharectl — share a Linux screen into calls. Each command is one function; its options are in
/// `CommandTables`, and `sharectl help` lists them.

// A reader that goes away (`sharectl serve | head -1`) makes a write fail with EPIPE, never ends
// the process: SIGPIPE is ignored process-wide, before anything is written.
signal(SIGPIPE, SIG_IGN)
// OpenSSL starts before anything can touch it, without its exit-time clean-up (`OpenSSLLibrary`):
// `exit` then frees nothing another thread may still be using.
OpenSSLLibrary.start()

let words = Array(CommandLine.arguments.dropFirst())
// The config file the command line's options were read over, if any: usage errors about an
// option it set name its line.
nonisolated(unsafe) var config: ConfigFile?
do {
    switch try CommandTables.sharectl.parse(words) {
    case .help(let command):
        say(command.flatMap(CommandTables.sharectl.help(for:)) ?? CommandTables.sharectl.overview)
    case .run(var arguments):
        if let file = try ShareConfig.file(for: arguments) {
            config = file
            let merged = try ShareConfig.arguments(from: file, words: words)
            arguments = merged
        }
        try await runCommand(arguments)
    }
    leave(0)
} catch let error as Arguments.UsageError {
    let located = config.map { $0.locate(error, commandLine: Array(words.dropFirst())) } ?? error
    StandardError.write("sharectl: \(located.description)\n")
    leave(2)
} catch {
    StandardError.write("sharectl: \(error)\n")
    leave(1)
}

/// Runs a command of `CommandTables.sharectl`, its arguments already checked against its table.
func runCommand(_ arguments: Arguments) async throws {
    switch arguments.command {
    case "version": try VersionCommand.run(arguments)
    case "completion": try CompletionCommand.run(arguments)
    case "snapshot": try SnapshotCommand.run(arguments)
    case "demo": try await DemoCommand.run(arguments, logger: makeLogger(arguments, label: "demo"))
    case "bench-wire": try BenchCommand.run(arguments)
    case "bench-pipeline": try await BenchPipelineCommand.run(arguments)
    case "diagnose": try DiagnoseCommand.run(arguments)
    case "scenario": try await ScenarioCommand.run(arguments)
    case "share": try await ShareCommand.run(arguments, logger: makeLogger(arguments, label: "share"))
    case "watch": try await WatchCommand.run(arguments, logger: makeLogger(arguments, label: "watch"))
    case "serve": try await ServeCommand.run(arguments, logger: makeLogger(arguments, label: "serve"))
    case "sources":
        // GDBus waits: on a thread of its own.
        try await ScenarioRunCommand.onThread { Result { try SourcesCommand.run(arguments) } }.get()
    case "camera": try await CameraCommand.run(arguments, logger: makeLogger(arguments, label: "camera"))
    case "kiosk": try KioskCommand.run(arguments)
    default: preconditionFailure("\(arguments.command) is in the command table but has no case here")
    }
}

/// Ends the process once a command has stopped what it started (media, connections, loops, files
/// written and closed; all output here is unbuffered), with `exit`. OpenSSL was started without its
/// exit-time clean-up (`OpenSSLLibrary`): that clean-up, racing a thread still in OpenSSL, was the
/// heap corruption a fresh-clone run once met after "Share ended" (glibc's "malloc_consolidate():
/// unaligned fastbin chunk detected") and an AddressSanitizer run once caught as a double free.
func leave(_ code: Int32) -> Never {
    exit(code)
}

/// Only the command line decides log levels: warnings by default, `--verbose` for info, or
/// `--log-level trace|debug|info|notice|warning|error`.
func makeLogger(_ arguments: Arguments, label: String) -> Logger {
    var level: Logger.Level = arguments.has("verbose") ? .info : .warning
    if let name = arguments.value("log-level"),
        let chosen = Logger.Level.allCases.first(where: { $0.description == name })
    {
        level = chosen
    }
    return Logger(label: label, level: level)
}

/// Writes a line to standard output at once (unbuffered), so status lines reach pipes and logs
/// as they happen.
func say(_ text: String) {
    StandardOutput.write(text + "\n")
}
