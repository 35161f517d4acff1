import ShareCore

/// `sharectl completion bash|zsh`: prints a completion script made from the command tables.
enum CompletionCommand {
    static func run(_ arguments: Arguments) throws {
        let table = CommandTables.sharectl
        switch arguments.positional.first {
        case "bash" where arguments.positional.count == 1: StandardOutput.write(table.bashCompletion())
        case "zsh" where arguments.positional.count == 1: StandardOutput.write(table.zshCompletion())
        default:
            throw Arguments.UsageError(
                description: "completion wants bash or zsh, e.g. source <(sharectl completion bash)")
        }
    }
}
