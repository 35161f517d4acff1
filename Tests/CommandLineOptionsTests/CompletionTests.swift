@testable import CommandLineOptions
import Testing

@Suite struct CompletionTests {
    let table = Sample.table

    @Test func theBashScriptNamesEveryCommandAndOption() {
        let script = table.bashCompletion()
        #expect(script.contains("complete -F _tool tool"))
        for command in table.allCommands {
            #expect(script.contains("    '\(command.name)'"), "no branch for \(command.name)")
            #expect(script.contains(command.name + " "), "\(command.name) is not offered as a command")
            for option in command.options {
                #expect(script.contains("--\(option.name) "), "--\(option.name) of \(command.name)")
            }
        }
        #expect(script.contains("'version'|'--version')"), "an alias shares its command's branch")
        #expect(script.contains("values='w:balanced detail motion'"))
        #expect(script.contains("'--out') values='d'"))
        #expect(script.contains("arguments=('w:list run' 'f')"))
    }

    @Test func theZshScriptNamesEveryCommandAndOption() {
        let script = table.zshCompletion()
        #expect(script.hasPrefix("#compdef tool\n"))
        for command in table.allCommands {
            #expect(script.contains("'\(command.name):\(command.summary)'"))
            for option in command.options {
                #expect(
                    script.contains("--\(option.name)=[") || script.contains("--\(option.name)["),
                    "--\(option.name) of \(command.name)")
            }
        }
        #expect(script.contains("'*--allow-origin=[another site that may connect]:ORIGIN: '"), "repeatable")
        #expect(script.contains("'--no-audio[send no audio]'"), "a switch")
        #expect(script.contains("'1:argument:(list run)'") && script.contains("'*:argument:_files'"))
    }

    @Test func zshSpecsQuoteWhatWouldEndAField() {
        let source = Sample.table.command(named: "send")!.option(named: "source")!
        #expect(
            CommandTable.zshSpec(source)
                == #"--source=[where it comes from: \[a\] 'quoted' word]:SOURCE:(synthetic portal\:window)"#)
        let listen = Sample.table.command(named: "serve")!.option(named: "listen")!
        #expect(CommandTable.zshSpec(listen) == #"--listen=[where it listens]:HOST\:PORT: "#)
        #expect(
            table.zshCompletion().contains(#"'--source=[where it comes from: \[a\] '\''quoted'\'' word]"#),
            "a single quote leaves and enters the quoted word")
    }

    @Test func shellWordsAreQuoted() {
        #expect(ShellWords.quoted("it's") == #"'it'\''s'"#)
        #expect(ShellWords.identifier("share-ctl") == "share_ctl")
    }
}
