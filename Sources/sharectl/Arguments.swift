import CommandLineOptions

/// A parsed command line: `sharectl COMMAND [ARGUMENT...] [--option VALUE] [--switch]`, checked
/// against the command's own table (`CommandTables`). Commands read it with `value`, `values`,
/// `has`, and `int`/`double`/`valueOrDefault`, which fall back to the table's default.
typealias Arguments = ParsedArguments

extension ParsedArguments {
    /// `--audio-bitrate KBPS` in bit/s: 16 to 128 kbit/s.
    func audioBitrate() throws(UsageError) -> Int {
        let kbps = try int("audio-bitrate")
        guard (16...128).contains(kbps) else {
            throw UsageError(description: "--audio-bitrate wants 16 to 128 (kbit/s), not \(kbps)")
        }
        return kbps * 1000
    }
}
