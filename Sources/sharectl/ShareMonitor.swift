import CallsClient
import CallsServer
import Foundation
import ShareCore
import StatsLine
import WebRTCTransport

/// `--metrics-listen HOST:PORT`: a share's figures for Prometheus at `/metrics` and its health at
/// `/healthz` (200 while media flows, 503 with the reason otherwise), served by `StatusServer` on
/// the process's loop. Fed each second's stats line and `ServiceHealth`'s verdict on it.
final class ShareMonitor: Sendable {
    private struct State {
        var metrics: ShareMetrics
        var verdict: ServiceHealth.Verdict?
    }

    private let state: Locked<State>

    init() {
        state = Locked(State(metrics: ShareMetrics(buildLabels: Self.buildLabels), verdict: nil))
    }

    func observe(_ stats: ShareStats, verdict: ServiceHealth.Verdict) {
        state.withLock {
            $0.metrics.observe(stats)
            $0.metrics.healthy = verdict == .healthy
            $0.verdict = verdict
        }
    }

    func published(session: Int) { state.withLock { $0.metrics.published(session: session) } }

    func captureRestarted(total: Int) { state.withLock { $0.metrics.captureRestarted(total: total) } }

    /// The answer for a path (runs on the loop thread: only reads under the lock).
    func page(_ path: String) -> StatusServer.Page? {
        switch path {
        case "/metrics":
            return StatusServer.Page(
                contentType: PrometheusText.contentType, body: state.withLock { $0.metrics.exposition })
        case "/healthz":
            switch state.withLock({ $0.verdict }) {
            case .healthy: return StatusServer.Page(body: "ok: media flows\n")
            case .unhealthy(let reason): return StatusServer.Page(status: 503, body: "unhealthy: \(reason)\n")
            case nil: return StatusServer.Page(status: 503, body: "starting: no media has left yet\n")
            }
        default:
            return nil
        }
    }

    /// `sharectl_build_info`'s labels: what `sharectl version` prints first.
    static var buildLabels: [(String, String)] {
        [
            ("version", VersionCommand.number), ("commit", GitCommit.hash ?? "unknown"),
            ("openssl", TransportLibraries.openSSLVersion), ("libsrtp", TransportLibraries.srtpVersion),
            ("libsoup", ServerLibraries.soupVersion)
        ]
    }

    /// Starts the server on `address` (`HOST:PORT`); says where it listens.
    static func serve(_ monitor: ShareMonitor, at address: String, logger: Logger) async throws -> StatusServer {
        let (host, port): (String, Int)
        do {
            (host, port) = try StatusServer.address(address)
        } catch {
            throw Arguments.UsageError(description: "--metrics-listen wants HOST:PORT, not '\(address)'")
        }
        let server = StatusServer(loop: ProcessLoop.shared, pages: { monitor.page($0) }, logger: logger)
        do {
            let base = try await server.start(host: host, port: port)
            say("Metrics at \(base)/metrics, health at \(base)/healthz")
        } catch {
            throw ShareFailure(description: "could not serve --metrics-listen \(address): \(error)")
        }
        return server
    }
}
