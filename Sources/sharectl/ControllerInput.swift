import CallsClient
import VideoSend

/// Hands what the user asks of a running share to its controller as it arrives: typed commands,
/// SIGINT or SIGTERM (stop), and in a room SIGUSR1 (stop the share or share again; the call goes
/// on). Says what each did.
enum ControllerInput {
    /// How the stops are said, and what goes before each line (a demo's `share │ `).
    struct Words: Sendable {
        var prefix = ""
        var stopTyped = "Stopping…"
        var stopSignal = "Stopping (signal)…"
    }

    /// Returns after a stop, when the requests end, or when its task is cancelled (the share
    /// ended by itself).
    static func forward(
        _ requests: AsyncStream<UserRequests.Request>, words: Words = Words(), to controller: ShareController
    ) async {
        let prefix = words.prefix
        for await request in requests {
            switch request {
            case .complaint(let text):
                say(prefix + text)
            case .command(.policy(let name)):
                if let policy = ScreenSendPolicy(argument: name) {
                    say(prefix + (await controller.setPolicy(policy)))
                } else {
                    say(prefix + "policy wants balanced, detail or motion, not '\(name)'")
                }
            case .command(.keyframe):
                say(prefix + (await controller.requestKeyframe()))
            case .command(.mute(let on)):
                say(prefix + (await controller.setMuted(on)))
            case .command(.fault(let fault)):
                say(prefix + (await controller.injectFault(fault)))
            case .command(.stop):
                say(prefix + words.stopTyped)
                controller.stop()
                return
            case .stopSignal:
                say(prefix + words.stopSignal)
                controller.stop()
                return
            case .toggleSignal:
                if let sharing = await controller.toggleSharing() {
                    say(prefix + (sharing ? "Sharing again…" : "Stopping the share (the call goes on)…"))
                }
            }
        }
    }
}

extension ControllerInput {
    /// Runs the share with the user's requests forwarded to it, and `beside` (work that lasts as
    /// long as the share), as one task group: the others end when the share does.
    static func run(
        _ controller: ShareController, forwarding user: UserRequests, words: Words = Words(),
        beside: (@Sendable () async -> Void)? = nil,
        _ events: @escaping @Sendable (ShareController.Event) -> Void
    ) async throws(ShareController.StartFailure) -> ShareController.Ending {
        let requests = user.requests
        let outcome = await withTaskGroup(of: Void.self) { group in
            group.addTask { await forward(requests, words: words, to: controller) }
            if let beside { group.addTask(operation: beside) }
            defer { group.cancelAll() }
            do throws(ShareController.StartFailure) {
                return Result<ShareController.Ending, ShareController.StartFailure>.success(
                    try await controller.run(events))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
