/// `PROGRAM completion zsh`: a zsh completion function (`_arguments` specs from the table) that
/// works both kept in `$fpath` and loaded with `source`.
extension CommandTable {
    public func zshCompletion() -> String {
        let function = "_" + ShellWords.identifier(program)
        let described = allCommands.map { ShellWords.quoted(Self.zshDescribe($0.name) + ":" + $0.summary) }
        let dashed = allCommands.flatMap(\.aliases).filter { $0.hasPrefix("-") } + ["--help", "-h"]
        var script = """
            #compdef \(program)
            # zsh completion for \(program), made by `\(program) completion zsh` from its table of options.
            # Keep it as \(function) in a folder of $fpath (e.g. /usr/local/share/zsh/site-functions),
            # or load it after compinit with: source <(\(program) completion zsh)

            \(function)() {
                local -a commands
                commands=(
            \(described.map { "        " + $0 }.joined(separator: "\n"))
                )
                if (( CURRENT == 2 )); then
                    if [[ $PREFIX == -* ]]; then
                        compadd -- \(dashed.map(ShellWords.quoted).joined(separator: " "))
                    else
                        _describe -t commands \(ShellWords.quoted("\(program) command")) commands
                    fi
                    return
                fi
                local command=$words[2]
                shift words
                (( CURRENT-- ))
                curcontext="${curcontext%:*:*}:\(ShellWords.identifier(program))-$command:"
                case $command in

            """
        for command in allCommands {
            var specs = command.options.map(Self.zshSpec)
            specs += ["(- *)-h[this text]", "(- *)--help[this text]"]
            for (index, argument) in command.arguments.enumerated() {
                let position = index == command.arguments.count - 1 ? "*" : "\(index + 1)"
                specs.append("\(position):argument:\(Self.zshAction(argument))")
            }
            script += "    (\(([command.name] + command.aliases).map(ShellWords.quoted).joined(separator: "|")))\n"
            script += "        _arguments -S \\\n"
            script += specs.map { "            " + ShellWords.quoted($0) }.joined(separator: " \\\n") + "\n"
            script += "        ;;\n"
        }
        script += """
                esac
            }

            if [[ $funcstack[1] == \(function) ]]; then
                \(function) "$@"
            else
                compdef \(function) \(program)
            fi

            """
        return script
    }

    /// `--name[help]`, `--name=[help]:PLACEHOLDER:ACTION`, `*--name=…` for one that repeats.
    static func zshSpec(_ option: CommandOption) -> String {
        let explanation = "[" + zshBracketed(option.help) + "]"
        switch option.kind {
        case .flag:
            return "--\(option.name)\(explanation)"
        case .value(let placeholder):
            return (option.repeatable ? "*" : "") + "--\(option.name)=\(explanation):\(zshColons(placeholder)):"
                + zshAction(option.completion)
        }
    }

    static func zshAction(_ completion: CommandOption.Completion) -> String {
        switch completion {
        case .none: return " "
        case .words(let words): return "(" + words.map(zshWord).joined(separator: " ") + ")"
        case .file: return "_files"
        case .directory: return "_files -/"
        }
    }

    /// A word of a `(…)` action: colons, spaces, parentheses and backslashes quoted.
    static func zshWord(_ word: String) -> String {
        ShellWords.escaping(#"\:() '"$`"#, in: word)
    }

    /// A match for `_describe`: a colon in it is quoted.
    static func zshDescribe(_ text: String) -> String { zshColons(text) }

    static func zshColons(_ text: String) -> String {
        ShellWords.escaping(#"\:"#, in: text)
    }

    /// Text inside `[…]`: brackets quoted.
    static func zshBracketed(_ text: String) -> String {
        ShellWords.escaping(#"\[]"#, in: text)
    }
}
