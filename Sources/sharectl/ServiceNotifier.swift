internal import CSystemd
import CallsClient
import Dispatch
import Foundation
import ShareCore

/// Whether a share is healthy, for systemd's watchdog and `/healthz`, one stats line at a time
/// (pure: the tests feed it lines). Healthy: media leaves (frames sent since the last line, a still
/// screen's repeats included), or the link holds it back (`limitedBy` bandwidth on a connected
/// connection) — and the screen's capture delivers: a capture that delivered nothing for
/// `captureSilence` lines is not healthy even while the encoder repeats its last picture (the
/// capture repeats a still screen's frame itself, so a still screen is not silent). Ready: the
/// first line with a frame sent. A share between connections (publishing
/// again) is not healthy, but it is not wedged either: systemd's `WatchdogSec` (60 s in the kiosk
/// unit) is longer than the reconnect's first waits, and a reconnect that never succeeds is what
/// a restart is for.
struct ServiceHealth: Sendable, Equatable {
    private var lastFramesSent: Int?
    private var lastEncoded: Int?
    /// Lines since the encoder last put a frame out: the link's excuse holds only while it does.
    private var linesSinceEncoded = 0
    private var lastCaptured: Int?
    private var capturedSilentLines = 0
    private(set) var ready = false
    /// Lines (seconds) without a captured frame before the capture counts as stalled.
    static let captureSilence = 2
    /// Held back by the link counts as healthy while a frame was encoded within this many lines:
    /// an encoder that puts out nothing takes the estimate to its floor, which is no excuse.
    static let encoderSilence = 5

    enum Verdict: Equatable {
        case healthy
        /// Why not, for the log.
        case unhealthy(String)
    }

    /// One stats line: (the verdict, whether the share became ready with it).
    mutating func observe(_ stats: ShareStats) -> (verdict: Verdict, becameReady: Bool) {
        let sent = stats.video.framesSent + (stats.camera?.framesSent ?? 0)
        defer { lastFramesSent = sent }
        let encoded = stats.video.framesEncoded + (stats.camera?.framesEncoded ?? 0)
        linesSinceEncoded = lastEncoded.map { encoded > $0 } ?? (encoded > 0) ? 0 : linesSinceEncoded + 1
        lastEncoded = encoded
        var becameReady = false
        if !ready, sent > 0 {
            ready = true
            becameReady = true
        }
        if stats.video.content == "screen", stats.video.framesCaptured > 0 || lastCaptured != nil {
            capturedSilentLines = stats.video.framesCaptured == lastCaptured ? capturedSilentLines + 1 : 0
            lastCaptured = stats.video.framesCaptured
        }
        if ready, capturedSilentLines >= Self.captureSilence {
            return (.unhealthy("the screen's capture delivered no frame for \(capturedSilentLines) s"), becameReady)
        }
        let moved = lastFramesSent.map { sent > $0 } ?? (sent > 0)
        if moved { return (.healthy, becameReady) }
        if stats.connection.state == "connected", stats.video.limitedBy == "bandwidth" {
            if linesSinceEncoded < Self.encoderSilence { return (.healthy, becameReady) }
            return (
                .unhealthy("the encoder put out no frame for \(linesSinceEncoded) s (the link's floor is no excuse)"),
                becameReady
            )
        }
        if stats.connection.state != "connected" {
            return (.unhealthy("the connection is \(stats.connection.state)"), becameReady)
        }
        // Nothing left and the capture delivered nothing either: say where it stopped (the
        // capture's own verdict above waits 2 s, for a still screen's repeats).
        if capturedSilentLines >= 1 {
            return (.unhealthy("the screen's capture delivered no frame for \(capturedSilentLines) s"), becameReady)
        }
        return (.unhealthy("no frame sent in the last second"), becameReady)
    }
}

/// Tells systemd how the share is (sd_notify through libsystemd): READY=1 once media flows,
/// STATUS= the status line's headline each second, WATCHDOG=1 while `ServiceHealth` says healthy.
/// Outside a service (no NOTIFY_SOCKET) it does nothing. sd_notify writes to a socket: it runs on
/// a queue of its own, never on the cooperative pool.
final class ServiceNotifier: Sendable {
    private let queue = DispatchQueue(label: "sharectl.sd-notify")
    let enabled: Bool

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        enabled = !(environment["NOTIFY_SOCKET"] ?? "").isEmpty
    }

    /// The watchdog interval systemd asks for (`WatchdogSec=`), if any.
    var watchdogInterval: Duration? {
        var micros: UInt64 = 0
        guard sd_watchdog_enabled(0, &micros) > 0 else { return nil }
        return .microseconds(Int64(micros))
    }

    /// One second of the share, with `ServiceHealth`'s verdict on it.
    func observe(_ stats: ShareStats, verdict: ServiceHealth.Verdict, becameReady: Bool) {
        guard enabled else { return }
        var state: [String] = []
        if becameReady { state.append("READY=1") }
        if let headline = stats.statusLines.first { state.append("STATUS=\(Self.oneLine(headline))") }
        if verdict == .healthy { state.append("WATCHDOG=1") }
        send(state)
    }

    /// STATUS= alone (a notice, publishing again).
    func status(_ text: String) {
        guard enabled else { return }
        send(["STATUS=\(Self.oneLine(text))"])
    }

    /// STOPPING=1 as the share ends.
    func stopping() {
        guard enabled else { return }
        send(["STOPPING=1"])
        queue.sync {}
    }

    private func send(_ assignments: [String]) {
        guard !assignments.isEmpty else { return }
        let text = assignments.joined(separator: "\n")
        queue.async { _ = sd_notify(0, text) }
    }

    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
