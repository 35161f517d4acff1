import Foundation
import ShareCore

/// The secrets `share` and `watch` take, each from the command line, a file or the environment
/// (`SecretOption` decides; an explicit flag wins over the variable). A secret given on the
/// command line works but is warned about: every user of the machine can read it in `ps`.
enum SecretArguments {
    static let whipToken = SecretOption(
        what: "the bearer token", flag: "token", fileFlag: "token-file",
        environment: "WHIP_TOKEN", credential: "whip-token")
    static let turnCredential = SecretOption(
        what: "the TURN credential", flag: "turn-credential",
        fileFlag: "turn-credential-file")
    static let roomLink = SecretOption(
        what: "the room link and its token", flag: "room", fileFlag: "room-file",
        environment: "SHARECTL_ROOM_URL")

    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// `--token`, `--token-file` or `WHIP_TOKEN`.
    static func whipToken(_ arguments: Arguments) throws -> String? {
        try resolve(whipToken, flagValue: arguments.value("token"), arguments)
    }

    /// `--turn-credential` or `--turn-credential-file`.
    static func turnCredential(_ arguments: Arguments) throws -> String? {
        try resolve(turnCredential, flagValue: arguments.value("turn-credential"), arguments)
    }

    /// `--room URL` (for `watch` also the first argument), `--room-file PATH` or `SHARECTL_ROOM_URL`.
    static func roomLink(_ arguments: Arguments, positional: String? = nil) throws -> String? {
        if positional != nil, arguments.value("room") != nil {
            throw Arguments.UsageError(
                description: "the room link is given twice (as an argument and with --room); keep one")
        }
        return try resolve(roomLink, flagValue: positional ?? arguments.value("room"), arguments)
    }

    /// Whether `share` joins a room rather than publishing over WHIP: `--room` or `--room-file`,
    /// or `SHARECTL_ROOM_URL` when neither `--whip` nor `--janus` is given.
    static func wantsRoom(_ arguments: Arguments) -> Bool {
        if arguments.value("room") != nil || arguments.value("room-file") != nil { return true }
        return arguments.value("whip") == nil && arguments.value("janus") == nil
            && !(environment["SHARECTL_ROOM_URL"] ?? "").isEmpty
    }

    private static func resolve(_ option: SecretOption, flagValue: String?, _ arguments: Arguments) throws -> String? {
        let resolved: SecretOption.Resolved?
        do {
            resolved = try option.resolve(
                flagValue: flagValue, filePath: arguments.value(option.fileFlag),
                environment: environment)
        } catch {
            throw Arguments.UsageError(description: error.description)
        }
        if let warning = resolved?.warning { StandardError.write("sharectl: warning: \(warning)\n") }
        return resolved?.value
    }
}
