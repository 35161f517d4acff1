internal import CSystemd
import CallsClient
import Dispatch
import Foundation
import ShareCore

/// Whether a share is healthy for systemd's watchdog, one stats line at a time (pure: the tests
/// feed it lines). Healthy: media leaves (frames sent since the last line, a still screen's
/// repeats included), or the link holds it back (`limitedBy` bandwidth on a connected
/// connection). Ready: the first line with a frame sent. A share between connections (publishing
/// again) is not healthy, but it is not wedged either: systemd's `WatchdogSec` (60 s in the kiosk
/// unit) is longer than the reconnect's first waits, and a reconnect that never succeeds is what
/// a restart is for.
struct ServiceHealth: Sendable, Equatable {
    private var lastFramesSent: Int?
    private(set) var ready = false

    enum Verdict: Equatable {
        case healthy
        /// Why not, for the log.
        case unhealthy(String)
    }

    /// One stats line: (the verdict, whether the share became ready with it).
    mutating func observe(_ stats: ShareStats) -> (verdict: Verdict, becameReady: Bool) {
        let sent = stats.video.framesSent + (stats.camera?.framesSent ?? 0)
        defer { lastFramesSent = sent }
        var becameReady = false
        if !ready, sent > 0 {
            ready = true
            becameReady = true
        }
        let moved = lastFramesSent.map { sent > $0 } ?? (sent > 0)
        if moved { return (.healthy, becameReady) }
        if stats.connection.state == "connected", stats.video.limitedBy == "bandwidth" {
            return (.healthy, becameReady)
        }
        if stats.connection.state != "connected" {
            return (.unhealthy("the connection is \(stats.connection.state)"), becameReady)
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
    private let health = Locked(ServiceHealth())
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

    func observe(_ stats: ShareStats) {
        guard enabled else { return }
        let (verdict, becameReady) = health.withLock { $0.observe(stats) }
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
