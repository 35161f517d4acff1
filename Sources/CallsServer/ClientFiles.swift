import Foundation

/// The browser client's files (HTML, JavaScript, CSS), which the server serves itself: shipped in
/// the project as this module's resources (Sources/CallsServer/Client), read once at start.
public struct ClientFiles: Sendable {
    public struct File: Sendable {
        public let contentType: String
        public let bytes: [UInt8]
    }

    private let files: [String: File]
    /// Where the files were read from.
    public let directory: String

    /// Debian's files a room on Janus needs in the browser, served as `/client/NAME` when present:
    /// janus.js (libjs-janus-gateway) and the adapter it expects (libjs-webrtc-adapter).
    public static let systemFiles = [
        "janus.js": "/usr/share/javascript/janus-gateway/janus.js",
        "adapter.js": "/usr/share/javascript/webrtc-adapter/adapter.js"
    ]

    /// Reads every file of `directory` (not recursive), and those of `system` that exist.
    public init(directory: String, system: [String: String] = ClientFiles.systemFiles) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        var files: [String: File] = [:]
        for name in names where !name.hasPrefix(".") {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(name))
            files[name] = File(contentType: Self.contentType(of: name), bytes: Array(data))
        }
        for (name, path) in system where files[name] == nil {
            if let data = FileManager.default.contents(atPath: path) {
                files[name] = File(contentType: Self.contentType(of: name), bytes: Array(data))
            }
        }
        guard files["room.html"] != nil else { throw RoomServerError.clientFilesMissing(directory) }
        self.files = files
        self.directory = directory
    }

    /// The files shipped with this build: `SHARECTL_CLIENT_DIR` when set, else the resource bundle
    /// beside the executable, else the one in the build directory.
    public static func bundled() throws -> ClientFiles {
        var candidates: [String] = []
        if let forced = ProcessInfo.processInfo.environment["SHARECTL_CLIENT_DIR"] { candidates.append(forced) }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        let bundleName = "sharectl_CallsServer.resources"
        candidates.append(executable.appendingPathComponent(bundleName).appendingPathComponent("Client").path)
        candidates.append(
            Bundle.main.bundleURL.appendingPathComponent(bundleName).appendingPathComponent("Client").path)
        // The sources themselves, for a binary run from elsewhere in the tree it was built in.
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Client").path
        candidates.append(sources)
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate + "/room.html") {
            return try ClientFiles(directory: candidate)
        }
        throw RoomServerError.clientFilesMissing(candidates.joined(separator: ", "))
    }

    public func file(_ name: String) -> File? {
        guard !name.contains("/"), !name.hasPrefix(".") else { return nil }
        return files[name]
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last.map(String.init) {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: "application/octet-stream"
        }
    }
}
