@testable import CallsClient
import GLibLoop
import Signalling
import TestSupport
import ShareCore
import Testing

/// The controller against `scripts/whip-test-server.py`: a first publish that the endpoint refuses
/// ends the share with the endpoint's reason and leaves nothing running; the events say nothing of
/// a publish that never happened. (Publishing again after a lost connection is the
/// `watchdog:reconnect` gate's, against a real aiortc endpoint with all UDP dropped.)
@Suite struct ShareControllerTests {
    private func configuration(_ url: String) -> ShareController.Configuration {
        var options = WHIPShareSession.Options(endpoint: url, token: nil)
        options.width = 320
        options.height = 180
        options.framesPerSecond = 10
        options.loopbackOnly = true
        options.connectTimeout = .seconds(5)
        var configuration = ShareController.Configuration(session: options)
        configuration.reconnect = true
        return configuration
    }

    @Test func aRefusedFirstPublishEndsTheShareWithTheEndpointsReason() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let controller = ShareController(
            configuration: configuration(server.url("/error-400")), loop: TestLoop.shared,
            logger: .disabled)
        let events = Locked<[String]>([])
        await #expect {
            _ = try await controller.run { event in events.withLock { $0.append("\(event)") } }
        } throws: { error in
            "\(error)".hasPrefix("could not start the share:") && "\(error)".contains("400")
        }
        #expect(events.withLock { $0 }.isEmpty, "no event for a share that never started: \(events.withLock { $0 })")
        #expect(await controller.injectFault(.captureStall) == "no share is running")
    }

    @Test func aCommandWithNoShareRunningSaysSo() async {
        let controller = ShareController(
            configuration: configuration("http://127.0.0.1:9/whip"), loop: TestLoop.shared,
            logger: .disabled)
        #expect(await controller.injectFault(.encoderStall) == "no share is running")
        #expect(await controller.requestKeyframe() == "no share is running")
        #expect(await controller.setPolicy(.detail) == "no share is running")
        #expect(await controller.toggleSharing() == nil, "no room, no screen to toggle")
        controller.stop()
    }

    /// With --reconnect, an endpoint that cannot be reached at the first publish (a kiosk started
    /// before its link) is tried again with the backoff; without it, the share ends at once.
    ///
    /// Each attempt's session is freed once the next begins: the controller keeps only the one in
    /// flight, and none once the share has ended.
    @Test func anUnreachableFirstPublishIsTriedAgainOnlyWithReconnect() async throws {
        // Nothing listens on the discard port here; the path is this test's own, to count its sessions.
        let url = "http://127.0.0.1:9/whip-unreachable"
        func alive() -> Int { WHIPShareSession.alive.withLock { $0[url] ?? 0 } }
        // A loop of its own: the shared one carries every other call test's ICE, DTLS and packets,
        // and behind them on a loaded machine two refused publishes took over 60 s (2 s alone).
        let loop = GLibLoop(name: "unreachable-publish")
        defer { loop.stop() }
        let controller = ShareController(configuration: configuration(url), loop: loop, logger: .disabled)
        let failures = Locked<[String]>([])
        let run = Task {
            try await controller.run { event in
                if case .publishingFailed(let reason, let retryIn) = event {
                    failures.withLock { $0.append("\(reason) (again in \(retryIn))") }
                }
            }
        }
        // A guard against a hang, not a measure: inside the whole bundle on two cores the cooperative
        // pool can be held by the call tests for over a minute (two runs failed at 60 s).
        try await until("two publishes failed and were tried again", within: .seconds(240)) {
            failures.withLock { $0.count } >= 2
        }
        try await until("the first attempt's session freed", within: .seconds(10)) { alive() <= 1 }
        controller.stop()
        #expect(try await run.value == .stopped)
        #expect(failures.withLock { $0 }.allSatisfy { $0.contains("127.0.0.1:9") }, "\(failures.withLock { $0 })")
        try await until("no session left once the share ended", within: .seconds(10)) { alive() == 0 }

        var once = configuration(url)
        once.reconnect = false
        let plain = ShareController(configuration: once, loop: loop, logger: .disabled)
        await #expect {
            _ = try await plain.run { _ in }
        } throws: { error in
            "\(error)".hasPrefix("could not start the share:")
        }
    }

    @Test func aRefusalIsNotTriedAgainEvenWithReconnect() {
        #expect(
            !ShareController.worthPublishingAgain(
                WHIPError.refused(url: "u", status: 401, reason: "Unauthorized", firstLine: nil)))
        #expect(
            ShareController.worthPublishingAgain(
                WHIPError.refused(url: "u", status: 503, reason: "Busy", firstLine: nil)))
        #expect(ShareController.worthPublishingAgain(WHIPError.unreachable(url: "u", reason: "refused")))
        #expect(!ShareController.worthPublishingAgain(WHIPError.invalidAnswer(url: "u", firstLine: "x")))
    }
}
