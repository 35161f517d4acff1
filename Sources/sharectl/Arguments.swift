import CommandLineOptions

/// A parsed command line: `sharectl COMMAND [ARGUMENT...] [--option VALUE] [--switch]`, checked
/// against the command's own table (`CommandTables`). Commands read it with `value`, `values`,
/// `has`, and `int`/`double`/`valueOrDefault`, which fall back to the table's default.
typealias Arguments = ParsedArguments
