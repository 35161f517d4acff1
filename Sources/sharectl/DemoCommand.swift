import CallsClient
import Foundation
import ShareCore

/// `sharectl demo`: the main job on a built-in default. It starts a headless viewer on this
/// machine — for now the aiortc WHIP endpoint from the project's virtualenv, since the room server
/// and the built-in viewer are not built yet — shares the synthetic screen and a tone to it over
/// real WebRTC with the live status line, then says what the viewer decoded.
enum DemoCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        let duration = try arguments.double("duration", default: 15)
        guard let root = projectRoot() else {
            throw ShareFailure(description: "demo: cannot find the project folder (run it from the clone, or set SHARECTL_ROOT)")
        }
        let python = root + "/.venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ShareFailure(description: "demo: the Python virtualenv is missing; `make demo` prepares it")
        }
        say("""
            sharectl demo — a synthetic 1280×720 screen and a 440 Hz tone, shared over WebRTC (ICE, DTLS-SRTP)
            to a headless viewer on this machine for \(Int(duration)) s.
            Not yet: the local room (sharectl serve) and the built-in viewer (sharectl watch); until they
            exist the viewer is aiortc behind a WHIP endpoint (RFC 9725).

            """)
        let port = 18_000 + Int(getpid() % 2000)
        let statsPath = NSTemporaryDirectory() + "sharectl-demo-viewer-\(getpid()).json"
        let viewer = Process()
        viewer.executableURL = URL(fileURLWithPath: python)
        viewer.arguments = [root + "/scripts/peers/aiortc_whip.py", "--port", "\(port)", "--stats", statsPath]
        viewer.standardOutput = FileHandle.nullDevice
        viewer.standardError = FileHandle.nullDevice
        try viewer.run()
        defer {
            // Ask the viewer to go, and make it go if it has not within three seconds.
            viewer.terminate()
            for _ in 0..<30 where viewer.isRunning { usleep(100_000) }
            if viewer.isRunning { kill(viewer.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(atPath: statsPath)
        }
        // Wait for the viewer to listen.
        var ready = false
        for _ in 0..<100 where !ready {
            try await Task.sleep(for: .milliseconds(100))
            ready = canConnect(port: port)
        }
        guard ready else { throw ShareFailure(description: "demo: the viewer did not start on port \(port)") }

        var share = arguments
        share.set("whip", "http://127.0.0.1:\(port)/whip")
        share.set("size", arguments.value("size") ?? "1280x720")
        share.set("duration", "\(duration)")
        try await ShareCommand.run(share, logger: logger)

        try await Task.sleep(for: .milliseconds(700))
        guard let data = FileManager.default.contents(atPath: statsPath),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let session = (object["sessions"] as? [[String: Any]])?.last,
              let video = session["video"] as? [String: Any] else {
            throw ShareFailure(description: "demo: the viewer reported nothing")
        }
        let audio = session["audio"] as? [String: Any] ?? [:]
        say("""

            The viewer decoded \(video["framesDecoded"] ?? 0) frames of \(video["codec"] ?? "?") at \
            \(video["width"] ?? 0)×\(video["height"] ?? 0) and \(audio["samplesDecoded"] ?? 0) samples of Opus \
            (peak \(String(format: "%.0f", audio["levelDbfs"] as? Double ?? -120)) dBFS); the session \
            \((session["deleted"] as? Bool) == true ? "was ended with DELETE" : "was not ended").
            """)
    }

    /// The clone this binary was built in: the nearest folder above it with Package.swift.
    static func projectRoot() -> String? {
        if let root = ProcessInfo.processInfo.environment["SHARECTL_ROOT"] { return root }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        if !CommandLine.arguments[0].contains("/"), let found = which("sharectl") { url = URL(fileURLWithPath: found) }
        for _ in 0..<6 {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.path + "/Package.swift"),
               FileManager.default.fileExists(atPath: url.path + "/scripts/peers/aiortc_whip.py") {
                return url.path
            }
        }
        let cwd = FileManager.default.currentDirectoryPath
        return FileManager.default.fileExists(atPath: cwd + "/scripts/peers/aiortc_whip.py") ? cwd : nil
    }

    private static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
