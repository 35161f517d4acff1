import CommandLineOptions
import Foundation
import Testing

@testable import sharectl

/// `share --config PATH` (or the default share.conf): the file's options under the command line's.
@Suite struct ShareConfigTests {
    @discardableResult
    func withFile<T>(_ text: String, _ body: (String) throws -> T) throws -> T {
        let path = NSTemporaryDirectory() + "share-\(UUID().uuidString).conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }

    func parsed(_ words: [String]) throws -> Arguments {
        guard case .run(let arguments) = try CommandTables.sharectl.parse(words) else {
            throw UsageError(description: "help")
        }
        return arguments
    }

    @Test func aConfigFilesOptionsAreTakenAndTheCommandLineWins() throws {
        try withFile("whip = http://127.0.0.1:1/whip\npolicy = detail\nfps = 15\nreconnect = true\n") { path in
            let words = ["share", "--config", path, "--fps", "20"]
            let file = try #require(try ShareConfig.file(for: parsed(words)))
            let arguments = try ShareConfig.arguments(from: file, words: words)
            #expect(arguments.value("whip") == "http://127.0.0.1:1/whip")
            #expect(arguments.value("policy") == "detail")
            #expect(arguments.value("fps") == "20")
            #expect(arguments.has("reconnect"))
        }
    }

    @Test func secretsAndUnknownKeysAreRefusedWithTheirLine() throws {
        for (text, message) in [
            ("whip = x\ntoken = abc", ":2: token cannot be set in a config file"),
            ("polcy = detail", ":1: unknown key 'polcy' for share; did you mean policy?"),
            ("config = other.conf", ":1: config cannot be set in a config file")
        ] {
            try withFile(text) { path in
                #expect {
                    _ = try ShareConfig.file(for: parsed(["share", "--config", path]))
                } throws: { error in
                    (error as? UsageError)?.description.contains(path + message) == true
                }
            }
        }
    }

    @Test func aMissingFileNamedOnTheCommandLineIsAnError() throws {
        #expect {
            _ = try ShareConfig.file(for: parsed(["share", "--config", "/nonexistent/share.conf"]))
        } throws: { error in
            (error as? UsageError)?.description
                == "--config: cannot read /nonexistent/share.conf: there is no such file"
        }
    }

    @Test func theDefaultPathFollowsXDG() {
        #expect(
            ShareConfig.defaultPath(environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"]) == "/c/sharectl/share.conf")
        #expect(ShareConfig.defaultPath(environment: ["HOME": "/h"]) == "/h/.config/sharectl/share.conf")
        #expect(
            ShareConfig.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"])
                == "/h/.config/sharectl/share.conf")
        #expect(ShareConfig.defaultPath(environment: [:]) == nil)
    }

    @Test func otherCommandsReadNoConfig() throws {
        #expect(try ShareConfig.file(for: parsed(["serve"])) == nil)
    }
}
