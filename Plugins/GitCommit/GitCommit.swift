import Foundation
import PackagePlugin

/// Writes `GitCommit.swift` for the target before every build (`git-commit.sh` beside this file):
/// the commit the checkout is at and whether tracked files differ from it, so `sharectl version`
/// says what it was built from. A tree that is not a git checkout of this package (a tarball, or
/// no git) gets `hash: nil`, which reads "commit unknown".
///
/// A prebuild command, because nothing SwiftPM sees as an input changes when HEAD moves; it runs
/// /bin/sh because git writes to standard output and a command's output must be a file.
@main struct GitCommitPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "GitCommit")
        let script = package.appending(path: "Plugins/GitCommit/git-commit.sh")
        return [
            .prebuildCommand(
                displayName: "Reading the git commit of \(context.package.displayName)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, package.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
