import Foundation
import ShareCore
import Testing

/// Where a secret comes from: `--token` or `--token-file` (never both), else WHIP_TOKEN; a file
/// read whole, its trailing line break dropped; every failure names the file.
@Suite struct SecretOptionTests {
    static let token = SecretOption(
        what: "the bearer token", flag: "token", fileFlag: "token-file",
        environment: "WHIP_TOKEN")

    /// A file reader over a fixed table, so the precedence tests touch no disk.
    static func files(_ table: [String: String]) -> (String) throws(SecretOption.Failure) -> String {
        { path throws(SecretOption.Failure) in
            guard let text = table[path] else { throw SecretOption.Failure(description: "no \(path)") }
            return text
        }
    }

    @Test func theCommandLineWinsOverTheEnvironmentAndWarns() throws {
        let resolved = try Self.token.resolve(
            flagValue: "from-flag", filePath: nil,
            environment: ["WHIP_TOKEN": "from-env"])
        #expect(resolved?.value == "from-flag")
        #expect(resolved?.source == .commandLine)
        #expect(
            resolved?.warning == "--token puts the bearer token on the command line, where other users of this "
                + "machine can read it in the process list (ps); use --token-file PATH or WHIP_TOKEN instead")
    }

    @Test func aFileWinsOverTheEnvironmentAndSaysNothing() throws {
        let resolved = try Self.token.resolve(
            flagValue: nil, filePath: "/t", environment: ["WHIP_TOKEN": "from-env"],
            read: Self.files(["/t": "from-file\n"]))
        #expect(resolved == .init(value: "from-file", source: .file(path: "/t"), warning: nil))
    }

    @Test func theEnvironmentIsUsedWhenNoFlagIsGiven() throws {
        let resolved = try Self.token.resolve(flagValue: nil, filePath: nil, environment: ["WHIP_TOKEN": "from-env\n"])
        #expect(resolved == .init(value: "from-env", source: .environment(name: "WHIP_TOKEN"), warning: nil))
        #expect(try Self.token.resolve(flagValue: nil, filePath: nil, environment: ["WHIP_TOKEN": ""]) == nil)
        #expect(try Self.token.resolve(flagValue: nil, filePath: nil, environment: [:]) == nil)
    }

    /// A unit's `LoadCredential=whip-token:PATH`: read from `$CREDENTIALS_DIRECTORY`, before the
    /// environment, after both flags.
    @Test func aSystemdCredentialComesBeforeTheEnvironment() throws {
        let option = SecretOption(
            what: "the bearer token", flag: "token", fileFlag: "token-file", environment: "WHIP_TOKEN",
            credential: "whip-token")
        let directory = NSTemporaryDirectory() + "credentials-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let variables = ["CREDENTIALS_DIRECTORY": directory, "WHIP_TOKEN": "from-env"]
        #expect(
            try option.resolve(flagValue: nil, filePath: nil, environment: variables)?.source
                == .environment(name: "WHIP_TOKEN"), "no such credential: the environment")
        try "from-credential\n".write(toFile: directory + "/whip-token", atomically: true, encoding: .utf8)
        #expect(
            try option.resolve(flagValue: nil, filePath: nil, environment: variables)
                == .init(value: "from-credential", source: .credential(name: "whip-token")))
        #expect(
            try option.resolve(flagValue: nil, filePath: "/t", environment: variables, read: Self.files(["/t": "f"]))?
                .value == "f", "a flag still wins")
        try "".write(toFile: directory + "/whip-token", atomically: true, encoding: .utf8)
        #expect(throws: SecretOption.Failure.self) {
            try option.resolve(flagValue: nil, filePath: nil, environment: variables)
        }
    }

    @Test func bothFlagsAreRefused() {
        #expect(
            throws: SecretOption.Failure(
                description: "--token and --token-file both give the bearer token; keep "
                    + "one (--token-file keeps it out of the process list)")
        ) {
            try Self.token.resolve(flagValue: "a", filePath: "/t", environment: [:], read: Self.files(["/t": "b"]))
        }
    }

    @Test(arguments: [
        ("secret\n", "secret"), ("secret\r\n", "secret"), ("secret\n\n", "secret"),
        ("secret", "secret"), ("  spaced secret \n", "  spaced secret ")
    ])
    func onlyTrailingLineBreaksAreDropped(_ text: String, _ value: String) throws {
        let resolved = try Self.token.resolve(
            flagValue: nil, filePath: "/t", environment: [:],
            read: Self.files(["/t": text]))
        #expect(resolved?.value == value)
    }

    // MARK: - Real files

    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aTokenFileIsReadWithoutItsNewline() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("token").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: path))
        let resolved = try Self.token.resolve(flagValue: nil, filePath: path, environment: [:])
        #expect(resolved?.value == "s3cret")
    }

    @Test func aMissingUnreadableOrEmptyFileIsAClearError() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing").path
        let empty = directory.appendingPathComponent("empty").path
        let blank = directory.appendingPathComponent("blank").path
        try Data().write(to: URL(fileURLWithPath: empty))
        try Data("\n".utf8).write(to: URL(fileURLWithPath: blank))
        let cases: [(String, String)] = [
            (missing, "--token-file: cannot read the secret file \(missing): there is no such file"),
            (directory.path, "--token-file: cannot read the secret file \(directory.path): Is a directory"),
            (empty, "--token-file \(empty) is empty; it should hold the bearer token"),
            (blank, "--token-file \(blank) is empty; it should hold the bearer token")
        ]
        for (path, message) in cases {
            #expect(throws: SecretOption.Failure(description: message)) {
                try Self.token.resolve(flagValue: nil, filePath: path, environment: [:])
            }
        }
    }
}
