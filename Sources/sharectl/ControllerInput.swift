import CallsClient
import VideoSend

/// Hands what the user asks of a running share to its controller, each within a tenth of a
/// second: typed commands (`ControlInput`), SIGINT or SIGTERM (stop), and in a room SIGUSR1 (stop
/// the share or share again; the call goes on). Says what each did.
enum ControllerInput {
    /// How the stops are said, and what goes before each line (a demo's `share │ `).
    struct Words: Sendable {
        var prefix = ""
        var stopTyped = "Stopping…"
        var stopSignal = "Stopping (signal)…"
    }

    static func forward(
        _ control: ControlInput?, stopRequested: @escaping @Sendable () -> Bool,
        toggleRequested: (@Sendable () -> Bool)? = nil, words: Words = Words(), to controller: ShareController
    ) async {
        let prefix = words.prefix
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            let (commands, complaints) = control?.take() ?? ([], [])
            for complaint in complaints { say(prefix + complaint) }
            for command in commands {
                switch command {
                case .policy(let name):
                    if let policy = ScreenSendPolicy(argument: name) {
                        say(prefix + (await controller.setPolicy(policy)))
                    } else {
                        say(prefix + "policy wants balanced, detail or motion, not '\(name)'")
                    }
                case .keyframe:
                    say(prefix + (await controller.requestKeyframe()))
                case .fault(let fault):
                    say(prefix + (await controller.injectFault(fault)))
                case .stop:
                    say(prefix + words.stopTyped)
                    controller.stop()
                    return
                }
            }
            if stopRequested() {
                say(prefix + words.stopSignal)
                controller.stop()
                return
            }
            if toggleRequested?() == true, let sharing = await controller.toggleSharing() {
                say(prefix + (sharing ? "Sharing again…" : "Stopping the share (the call goes on)…"))
            }
        }
    }
}
