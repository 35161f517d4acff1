import CallsClient
import Foundation
import GLibLoop
import ShareCore
import TestSupport
import Testing
@testable import CallMedia
@testable import WebRTCTransport

/// Two real peer connections on 127.0.0.1 (libnice, OpenSSL DTLS, libsrtp2, libopus), each on a
/// GLib loop of its own. Timeouts only guard against hangs; what is judged is the order of events
/// and the reason.
@Suite struct ConsentExpiryTests {
    @Test func aPeerThatFallsSilentEndsTheConnectionOnConsentBeforeLibniceGivesUp() async throws {
        let loopA = GLibLoop(name: "consent-a")
        let loopB = GLibLoop(name: "consent-b")
        defer { loopA.stop(); loopB.stop() }
        let logs = LogCapture()
        let a = try PeerConnection(
            loop: loopA, configuration: .init(loopbackOnly: true), logger: logs.logger(label: "a", level: .warning))
        let b = try PeerConnection(loop: loopB, configuration: .init(loopbackOnly: true), logger: .disabled)
        let statesOfA = StateLog(a.stateChanges)
        let audio = try await a.addTransceiver(kind: .audio, direction: .sendonly)
        try await b.addTransceiver(kind: .audio, direction: .recvonly)
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        try await a.attachAudioTone(to: audio, toneLevelDbfs: -20)
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()

        // B's receiver reports reach A: consent holds while they come.
        try? await until("A has three of B's receiver reports", within: .seconds(30)) {
            await a.statistics().transport.rtcpReceived >= 3
        }
        #expect(await a.statistics().transport.rtcpReceived >= 3)

        // B's loop stops: no goodbye, its sockets stay open, and nothing from B (reports, answers
        // to A's checks) reaches A again. A goes on sending its tone.
        loopB.stop()
        let silentFrom = ContinuousClock.now
        let ended = (try? await until("A's connection ends", within: .seconds(75)) { a.state != .connected }) != nil
        let endedAfter = silentFrom.duration(to: .now)
        #expect(ended)
        let stats = await a.statistics()
        #expect(a.state == .failed(ConsentTimer.expiredReason), "A is \(a.state)")
        // Consent ended it, not libnice: the pair was still up in libnice's eyes (its rule is 50 s).
        #expect(!stats.transport.iceState.hasPrefix("failed"), "ICE: \(stats.transport.iceState)")

        // Nothing more leaves A, though its tone goes on being encoded until A is closed.
        let sentAtEnd = stats.transport.bytesSent
        let encodedAtEnd = stats.transceiver(.audio)?.sent?.audioFramesSent ?? 0
        try await Task.sleep(for: .seconds(1))
        let later = await a.statistics()
        #expect(
            later.transport.bytesSent == sentAtEnd,
            "\(later.transport.bytesSent - sentAtEnd) bytes sent after consent expired")
        #expect((later.transceiver(.audio)?.sent?.audioFramesSent ?? 0) >= encodedAtEnd)

        let warning = logs.all.first { $0.message == ConsentTimer.expiredReason }
        #expect(warning?.metadata["consent.silence"] != nil)
        print(
            "consent: A stopped sending \(endedAfter) after B fell silent (consent.silence \(warning?.metadata["consent.silence"] ?? "?"))"
        )

        await a.close()
        await b.close()
        let seen = await statesOfA.finished()
        #expect(seen == [.connecting, .connected, .failed(ConsentTimer.expiredReason), .closed], "\(seen)")
    }
}
