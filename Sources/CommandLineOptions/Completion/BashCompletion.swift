/// `PROGRAM completion bash`: a bash script that completes commands, each command's own options,
/// option values (listed words, files, folders) and plain arguments, from the table.
extension CommandTable {
    public func bashCompletion() -> String {
        let function = "_" + ShellWords.identifier(program)
        var script = """
            # bash completion for \(program), made by `\(program) completion bash` from its table of options.
            # Load it with: source <(\(program) completion bash)
            # or keep it:   \(program) completion bash > /usr/share/bash-completion/completions/\(program)

            \(function)() {
                local line=${COMP_LINE:0:COMP_POINT} cur prev= command values= options= valued=
                local -a words arguments=()
                read -r -a words <<< "$line"
                [[ -z $line || $line == *[[:space:]] ]] && words+=("")
                cur=${words[-1]}
                ((${#words[@]} > 1)) && prev=${words[-2]}
                if [[ $cur == --*=* ]]; then prev=${cur%%=*}; cur=${cur#*=}; fi
                COMPREPLY=()
                if ((${#words[@]} <= 2)); then
                    \(function)_reply \(ShellWords.quoted("w:" + topLevelWords.joined(separator: " "))) "$cur"
                    return
                fi
                command=${words[1]}
                case $command in

            """
        for command in allCommands {
            let options = command.options.map { "--\($0.name)" } + ["-h", "--help"]
            let valued = command.options.filter(\.takesValue).map { "--\($0.name)" }
            script += "    \(([command.name] + command.aliases).map(ShellWords.quoted).joined(separator: "|")))\n"
            script += "        options=\(ShellWords.quoted(options.joined(separator: " ")))\n"
            script += "        valued=\(ShellWords.quoted(valued.joined(separator: " ")))\n"
            script +=
                "        arguments=(\(command.arguments.map { ShellWords.quoted(Self.bashSpec($0)) }.joined(separator: " ")))\n"
            if !valued.isEmpty {
                script += "        case $prev in\n"
                // Options that share a completion share a branch.
                var groups: [(spec: String, names: [String])] = []
                for option in command.options where option.takesValue {
                    let spec = Self.bashSpec(option.completion)
                    if let index = groups.firstIndex(where: { $0.spec == spec }) {
                        groups[index].names.append("--\(option.name)")
                    } else {
                        groups.append((spec, ["--\(option.name)"]))
                    }
                }
                for group in groups {
                    script +=
                        "        \(group.names.map(ShellWords.quoted).joined(separator: "|"))) values=\(ShellWords.quoted(group.spec)) ;;\n"
                }
                script += "        esac\n"
            }
            script += "        ;;\n"
        }
        script += """
                *) return ;;
                esac
                if [[ -n $values ]]; then \(function)_reply "$values" "$cur"; return; fi
                if [[ $cur == -* ]]; then \(function)_reply "w:$options" "$cur"; return; fi
                # Which plain argument this is: the words so far that are neither options nor their values.
                local i count=0
                for ((i = 2; i < ${#words[@]} - 1; i++)); do
                    case ${words[i]} in
                    --*=*) ;;
                    -*) [[ " $valued " == *" ${words[i]} "* ]] && ((i += 1)) ;;
                    *) ((count += 1)) ;;
                    esac
                done
                ((${#arguments[@]})) || return
                ((count < ${#arguments[@]})) || count=$((${#arguments[@]} - 1))
                \(function)_reply "${arguments[count]}" "$cur"
            }

            # \(function)_reply SPEC CUR: w:WORDS (those words), f (files), d (folders), n (nothing to offer).
            \(function)_reply() {
                local cur=$2
                case $1 in
                w:*) mapfile -t COMPREPLY < <(compgen -W "${1#w:}" -- "$cur") ;;
                f) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
                d) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
                esac
                # Readline replaces only what follows the word's last ':' (a COMP_WORDBREAKS character).
                if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
                    local before=${cur%"${cur##*:}"}
                    COMPREPLY=("${COMPREPLY[@]#"$before"}")
                fi
            }

            complete -F \(function) \(program)

            """
        return script
    }

    /// What completes the command word: every command, then its aliases and `--help`.
    var topLevelWords: [String] {
        allCommands.map(\.name) + allCommands.flatMap(\.aliases) + ["--help", "-h"]
    }

    static func bashSpec(_ completion: CommandOption.Completion) -> String {
        switch completion {
        case .none: return "n"
        case .words(let words): return "w:" + words.joined(separator: " ")
        case .file: return "f"
        case .directory: return "d"
        }
    }
}
