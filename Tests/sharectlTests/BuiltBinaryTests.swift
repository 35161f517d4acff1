import CommandLineOptions
import Foundation
import ShareCore
@testable import sharectl
import TestSupport
import Testing

/// The sharectl binary of this build, run as a user would: help, errors, the version line, and the
/// completion scripts checked by bash and (when it is installed) zsh.
@Suite struct BuiltBinaryTests {
    static let packageRoot = BuiltProducts.packageRoot
    static let sharectl = BuiltProducts.sharectl

    struct Ran {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `executable` on a plain thread of its own: its waits must not hold a thread of the
    /// cooperative pool (two on this machine, shared with every other test of the run).
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> Ran {
        try await onPlainThread { try runBlocking(executable, arguments, environment: environment) }
    }

    private static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]?
    ) throws -> Ran {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes are read at once, so neither fills while the other is read.
        let errorData = Locked<Data>(Data())
        let reader = Thread {
            let data = errors.fileHandleForReading.readDataToEndOfFile(); errorData.withLock { $0 = data }
        }
        reader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { usleep(1000) }
        return Ran(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }

    func sharectl(_ arguments: String...) async throws -> Ran {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.sharectl), "build sharectl first: \(Self.sharectl)")
        return try await Self.run(Self.sharectl, arguments)
    }

    /// `bash -c SCRIPT SHARECTL ARGUMENT...`: the script's $0 is this build's sharectl.
    func bash(_ script: String, _ arguments: String...) async throws -> Ran {
        try await Self.run("/bin/bash", ["-c", script, Self.sharectl] + arguments)
    }

    @Test func shareHelpListsEveryShareOption() async throws {
        let ran = try await sharectl("share", "--help")
        #expect(ran.status == 0 && ran.errors.isEmpty)
        #expect(ran.output.hasPrefix("usage: sharectl share "))
        for option in CommandTables.share.options {
            #expect(ran.output.contains("  " + option.spelled), "\(option.spelled)")
        }
        #expect(try await sharectl("help", "share").output == ran.output)
        #expect(try await sharectl("share", "-h").output == ran.output)
    }

    @Test func helpListsEveryCommand() async throws {
        let ran = try await sharectl("--help")
        #expect(ran.status == 0)
        for command in CommandTables.sharectl.allCommands { #expect(ran.output.contains("\n  \(command.name) ")) }
        #expect(try await sharectl().output == ran.output, "no command: the same list")
        #expect(try await sharectl("help").output == ran.output)
    }

    @Test func misplacedAndUnknownOptionsExitTwoAndPointAtHelp() async throws {
        let misplaced = try await sharectl("serve", "--policy", "detail")
        #expect(misplaced.status == 2 && misplaced.output.isEmpty)
        #expect(
            misplaced.errors == "sharectl: --policy is an option of share, not of serve (see: sharectl serve --help)\n")
        let unknown = try await sharectl("share", "--polcy", "detail")
        #expect(unknown.status == 2)
        #expect(
            unknown.errors
                == "sharectl: unknown option --polcy for share; did you mean --policy? (see: sharectl share --help)\n")
        let command = try await sharectl("shre")
        #expect(command.status == 2 && command.errors.contains("did you mean share?"))
    }

    @Test func versionNamesTheVersionAndTheCommitBeforeTheLibraries() async throws {
        let ran = try await sharectl("--version")
        #expect(ran.status == 0)
        let lines = ran.output.split(separator: "\n").map(String.init)
        let first = try #require(lines.first)
        #expect(first.hasPrefix("sharectl \(VersionCommand.number), commit "))
        #expect(
            lines.dropFirst().first?.hasPrefix("  x264") == true && ran.output.contains("  OpenSSL "),
            "the libraries follow")
        #expect(try await sharectl("version").output == ran.output)
        // Built from this checkout: the commit is the checkout's HEAD, or one before it when the
        // binary was built and then more was committed (when git is here to say).
        let head = try await Self.run("/usr/bin/git", ["-C", Self.packageRoot.path, "rev-parse", "HEAD"])
        if head.status == 0 {
            let named = first.split(separator: " ").dropFirst(3).first.map(String.init) ?? ""
            #expect(named.count == 40, "\(first) names no commit")
            let ancestor = try await Self.run(
                "/usr/bin/git", ["-C", Self.packageRoot.path, "merge-base", "--is-ancestor", named, "HEAD"])
            #expect(ancestor.status == 0, "\(first): \(named) is not HEAD or before it")
        }
    }

    /// The plugin's script on a tarball (no .git), on a package unpacked inside another repository,
    /// and on a repository of its own.
    @Test func theCommitIsUnknownOutsideAGitCheckout() async throws {
        let script = Self.packageRoot.appendingPathComponent("Plugins/GitCommit/git-commit.sh").path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sharectl-git-commit-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let repository = work.appendingPathComponent("repository"), tarball = work.appendingPathComponent("tarball")
        let inside = repository.appendingPathComponent("vendored")
        for folder in [tarball, inside] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        func made(_ package: URL) async throws -> String {
            let out = work.appendingPathComponent("out-\(package.lastPathComponent)")
            let ran = try await Self.run("/bin/sh", [script, package.path, out.path])
            #expect(ran.status == 0, "\(ran.errors)")
            return try String(contentsOf: out.appendingPathComponent("GitCommit.swift"), encoding: .utf8)
        }
        #expect(try await made(tarball).contains("static let hash: String? = nil"))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git") else { return }
        let git = ["-C", repository.path, "-c", "user.name=t", "-c", "user.email=t@example.org"]
        _ = try await Self.run("/usr/bin/git", ["init", "-q", repository.path])
        _ = try await Self.run("/usr/bin/git", git + ["commit", "-q", "--allow-empty", "-m", "one"])
        let hash = try await Self.run("/usr/bin/git", ["-C", repository.path, "rev-parse", "HEAD"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(hash.count == 40)
        #expect(
            try await made(inside).contains("static let hash: String? = nil"), "another repository's commit is not ours"
        )
        let own = try await made(repository)
        #expect(own.contains("static let hash: String? = \"\(hash)\"") && own.contains("static let modified = false"))
    }

    @Test func theBashScriptIsValidBash() async throws {
        let ran = try await bash(#"set -o pipefail; "$0" completion bash | bash -n"#)
        #expect(ran.status == 0, "\(ran.errors)")
    }

    @Test(arguments: [
        ("sharectl sh", "share"),
        ("sharectl share --po", "--policy"),
        ("sharectl share --policy ", "balanced detail motion"),
        ("sharectl share --codec=v", "vp8"),
        ("sharectl share --source portal:w", "window"),
        ("sharectl serve --pol", ""),
        ("sharectl camera ", "list test"),
        ("sharectl help sc", "scenario"),
        ("sharectl completion ", "bash zsh")
    ])
    func bashCompletesFromTheTable(line: String, offered: String) async throws {
        let ran = try await bash(
            #"""
            source <("$0" completion bash) || exit 1
            COMP_LINE=$1 COMP_POINT=${#1}
            _sharectl
            printf '%s' "${COMPREPLY[*]}"
            """#, line)
        #expect(ran.status == 0, "\(ran.errors)")
        #expect(ran.output == offered, "\(line)")
    }

    static let zsh = ["/usr/bin/zsh", "/bin/zsh"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: zsh != nil, "zsh is not installed (scripts/setup.sh test installs it)"))
    func theZshScriptIsValidZshAndCompletesFromTheTable() async throws {
        let zsh = try #require(Self.zsh)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sharectl-zsh-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try await sharectl("completion", "zsh").output.write(
            to: work.appendingPathComponent("_sharectl"), atomically: true, encoding: .utf8)
        let check = try await Self.run(zsh, ["-n", work.appendingPathComponent("_sharectl").path])
        #expect(check.status == 0, "\(check.errors)")
        let capture = work.appendingPathComponent("capture.zsh")
        try Self.zshCapture.write(to: capture, atomically: true, encoding: .utf8)
        for (line, offered) in [
            ("sharectl sh", "share"), ("sharectl share --policy ", "balanced detail motion"),
            ("sharectl serve --tls-", "--tls-cert --tls-key"), ("sharectl camera ", "list test"),
            ("sharectl share --source portal:", "portal:monitor portal:window portal:virtual")
        ] {
            let ran = try await Self.run("/usr/bin/timeout", ["60", zsh, capture.path, work.path, line])
            #expect(ran.status == 0, "\(line): \(ran.errors)")
            #expect(ran.output.trimmingCharacters(in: .whitespacesAndNewlines) == offered, "\(line)")
        }
    }

    /// `zsh capture.zsh FPATH LINE`: types LINE and a tab into an interactive zsh (a zpty) with
    /// FPATH's _sharectl, and prints the matches completion offered, each once (`_arguments` asks
    /// `compadd` more than once for some).
    static let zshCapture = #"""
        zmodload zsh/zpty || exit 1
        zpty z zsh -f -i
        zpty -w z "PROMPT=; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
        zpty -w z 'compadd() { builtin compadd "$@"; local -a m; builtin compadd -O m "$@"; local x; for x in $m; do print -r -- "<M>$x</M>"; done }'
        zpty -w z 'comppostfuncs=(_done); _done() { compstate[insert]=""; compstate[list]=""; print "<DONE>" }'
        zpty -w z 'print READY'
        local line
        local -a found
        while zpty -r z line; do [[ $line == READY* ]] && break; done
        zpty -w -n z "$2"$'\t'
        while zpty -r z line; do
            [[ $line == *'<DONE>'* ]] && break
            [[ $line == *'<M>'* ]] && found+=("${${line##*<M>}%%</M>*}")
        done
        found=(${(u)found})
        print -r -- "${(j: :)found}"
        zpty -d z
        """#
}
