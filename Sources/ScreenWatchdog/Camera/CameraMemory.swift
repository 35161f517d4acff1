import Foundation

/// The remembered camera, kept in the XDG state directory
/// (`$XDG_STATE_HOME/sharectl/camera`, by default `~/.local/state/sharectl/camera`): its stable
/// id on the first line and its name on the second.
public struct CameraMemory: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The default place, from the environment.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> CameraMemory {
        let base: String
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = state
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        }
        return CameraMemory(path: base + "/sharectl/camera")
    }

    public func load() -> (id: String, name: String)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 2, !lines[0].isEmpty else { return nil }
        return (lines[0], lines[1])
    }

    public func save(id: String, name: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("\(id)\n\(name)\n".utf8).write(to: url, options: .atomic)
    }
}
