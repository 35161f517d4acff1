import Foundation
import ShareCore

/// sharectl — share a Linux screen into calls. Each command is one function; `help` lists them.
let usage = """
    usage: sharectl COMMAND [OPTIONS]

    commands:
      demo                      run the built-in default: a synthetic screen through the encoders,
                                RTP packetization and decoding, with a status line each second
                                [--duration SECONDS] (default 10)
      version                   the C libraries this build links, with their versions
      share --source synthetic --whip URL
                                send the synthetic screen and a tone to a WHIP endpoint (RFC 9725)
                                [--token TOKEN] [--codec h264|vp8] [--duration SECONDS]
                                [--stats-json PATH] [--size WxH] [--fps N] [--bitrate KBPS]
                                [--no-audio] [--verbose]
      snapshot PATH.png         draw one frame of the synthetic screen to a PNG file
                                [--width W --height H --frame N]
      bench-wire DIR            time the wire code on a workload (make bench runs it beside aiortc)
      help                      this text
    """

let valueFlags: Set<String> = ["duration", "width", "height", "frame", "codec", "source", "whip", "token", "room",
                               "stats-json", "size", "fps", "bitrate", "name", "log-level"]
let switchFlags: Set<String> = ["no-audio", "verbose", "quiet"]

do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()), valueFlags: valueFlags, switchFlags: switchFlags)
    switch arguments.command {
    case "version", "--version": try VersionCommand.run(arguments)
    case "snapshot": try SnapshotCommand.run(arguments)
    case "demo": try DemoCommand.run(arguments)
    case "bench-wire": try BenchCommand.run(arguments)
    case "share": try await ShareCommand.run(arguments, logger: makeLogger(arguments, label: "share"))
    case "help", "--help", "-h": print(usage)
    default:
        StandardError.write("sharectl: unknown command '\(arguments.command)'\n\(usage)\n")
        exit(2)
    }
} catch let error as Arguments.UsageError {
    StandardError.write("sharectl: \(error.description)\n")
    exit(2)
} catch {
    StandardError.write("sharectl: \(error)\n")
    exit(1)
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
