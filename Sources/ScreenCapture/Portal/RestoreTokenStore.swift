import Foundation

/// Where the portal's restore token is kept between runs: `$XDG_STATE_HOME/sharectl/portal-restore-token`
/// (`~/.local/state/...` when unset), or a path the user gives.
public struct RestoreTokenStore: Sendable, Hashable {
    public let path: String

    public init(path: String) { self.path = path }

    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base: String
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = state
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        }
        return base + "/sharectl/portal-restore-token"
    }

    /// The saved token, or nil when there is none (no file, empty, or not one line of text).
    public func load() -> String? {
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.count <= 512, !token.contains(where: \.isNewline) else { return nil }
        return token
    }

    /// Saves the token (private to the user, replaced atomically).
    public func save(_ token: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let temporary = path + ".tmp"
        guard
            FileManager.default.createFile(
                atPath: temporary, contents: Data((token + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary])
        }
        if rename(temporary, path) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    public func clear() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
