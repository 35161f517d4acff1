import Foundation
import GLibLoop
import ScreenCapture

/// `sharectl sources [--restore-token-file PATH]`: what can be captured here — the ScreenCast
/// portal (version, source types, cursor modes), PipeWire, and the restore token's state.
enum SourcesCommand {
    static func run(_ arguments: Arguments) throws {
        var lines: [String] = ["synthetic          the built-in synthetic screen (always)"]
        let loop = ProcessLoop.shared
        defer { loop.stop() }
        do {
            let capabilities = try ScreenCastSession.capabilities(loop: loop)
            lines.append("portal             xdg-desktop-portal ScreenCast version \(capabilities.version)")
            lines.append("  source types     \(capabilities.sourceTypes.names.joined(separator: ", "))")
            lines.append(
                "  cursor modes     \(capabilities.cursorModes.isEmpty ? "none offered (version 1)" : capabilities.cursorModes.names.joined(separator: ", "))"
            )
            lines.append(
                "  unattended       \(capabilities.version >= RestoreTokenPolicy.firstVersion ? "yes (restore tokens)" : "no (needs version 4)")"
            )
        } catch {
            lines.append("portal             not available: \(error)")
        }
        let store = CaptureSourceArguments.tokenStore(arguments)
        lines.append("  restore token    \(store.load() != nil ? "saved" : "none") at \(store.path)")
        let pipewire = CaptureLibraries.pipewireLibraryVersion
        if let problem = PipeWireCapture.probeDaemon() {
            lines.append("pipewire:NODE      PipeWire \(pipewire): \(problem)")
        } else {
            lines.append("pipewire:NODE      PipeWire \(pipewire), daemon reachable (video nodes: pw-cli ls Node)")
        }
        for line in lines { say(line) }
    }
}
