import Foundation
import GLibLoop
import ScreenCapture
import ShareCore

/// The real capture sources of `share`: `--source portal[:monitor|window|virtual]` (the
/// xdg-desktop-portal ScreenCast, with `--unattended`, `--restore-token-file PATH`, `--no-cursor`)
/// and `--source pipewire:NODE` (any PipeWire video node on the default socket).
enum CaptureSourceArguments {
    /// nil for the synthetic screen.
    static func make(_ source: String, _ arguments: Arguments, loop: GLibLoop?, logger: Logger) throws
        -> ScreenCaptureSource?
    {
        if source == "synthetic" { return nil }
        if source.hasPrefix("pipewire:") {
            guard let node = UInt32(source.dropFirst("pipewire:".count)) else {
                throw Arguments.UsageError(
                    description: "--source pipewire:NODE wants a node id (see pw-cli ls Node), not '\(source)'")
            }
            return ScreenCaptureSource(target: .node(node), loop: nil, logger: logger)
        }
        guard source == "portal" || source.hasPrefix("portal:") else {
            throw Arguments.UsageError(
                description:
                    "unknown --source '\(source)' (synthetic, portal[:monitor|window|virtual] or pipewire:NODE)")
        }
        var options = ScreenCastSession.Options(tokenStore: tokenStore(arguments))
        switch source.dropFirst("portal".count) {
        case "", ":monitor": options.sourceTypes = .monitor
        case ":window": options.sourceTypes = .window
        case ":virtual": options.sourceTypes = .virtual
        default:
            throw Arguments.UsageError(
                description: "--source portal takes :monitor, :window or :virtual, not '\(source)'")
        }
        options.unattended = arguments.has("unattended")
        options.cursor = !arguments.has("no-cursor")
        return ScreenCaptureSource(target: .portal(options), loop: loop, logger: logger)
    }

    static func tokenStore(_ arguments: Arguments) -> RestoreTokenStore {
        RestoreTokenStore(path: arguments.value("restore-token-file") ?? RestoreTokenStore.defaultPath())
    }

    /// One line for "Sharing …".
    static func describe(_ capture: ScreenCaptureSource) -> String {
        switch capture.target {
        case .node(let node):
            return "PipeWire node \(node)"
        case .portal:
            guard let session = capture.session else { return "the portal's screen" }
            let size = session.stream.width.flatMap { w in session.stream.height.map { "\(w)×\($0)" } }
            let token: String
            switch session.tokenOutcome {
            case .restored: token = "restored from the saved token, no picker"
            case .granted: token = "new grant, restore token saved"
            case .replacedStale: token = "the saved token was stale: new grant, token saved"
            case .none: token = "no restore token"
            }
            return
                "the screen from the portal (PipeWire node \(session.stream.nodeID)\(size.map { ", \($0)" } ?? ""); \(token))"
        }
    }
}
