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
      snapshot PATH.png         draw one frame of the synthetic screen to a PNG file
                                [--width W --height H --frame N]
      help                      this text
    """

let valueFlags: Set<String> = ["duration", "width", "height", "frame", "codec"]
let switchFlags: Set<String> = []

do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()), valueFlags: valueFlags, switchFlags: switchFlags)
    switch arguments.command {
    case "version", "--version": try VersionCommand.run(arguments)
    case "snapshot": try SnapshotCommand.run(arguments)
    case "demo": try DemoCommand.run(arguments)
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
