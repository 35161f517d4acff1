import Foundation
import GLibLoop
import ShareCore
import TestSupport
import Testing
import WebRTCTransport
@testable import CallMedia

/// A closed connection lets go of everything under it: the call leg, its secure transport and the
/// ICE agent (and with them DTLS, SRTP and the libnice agent). A share that publishes again, or a
/// room whose viewers come and go, would otherwise keep every connection it ever made.
@Suite struct PeerConnectionTeardownTests {
    private final class Weak<T: AnyObject>: @unchecked Sendable {
        weak var value: T?
        init(_ value: T?) { self.value = value }
    }

    private struct Parts {
        let connection: Weak<PeerConnection>
        let leg: Weak<CallLegMedia>
        let transport: Weak<SecureTransport>
        let ice: Weak<ICEAgent>
        var alive: [String] {
            [
                ("connection", connection.value != nil), ("leg", leg.value != nil),
                ("transport", transport.value != nil), ("ICE agent", ice.value != nil)
            ]
            .filter(\.1).map(\.0)
        }
    }

    /// Connects two connections (audio both ways), closes them, and returns weak references to the
    /// offerer's parts; the connections themselves go out of scope here.
    private func connectAndClose(on loop: GLibLoop) async throws -> Parts {
        let a = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let audio = try await a.addTransceiver(kind: .audio, direction: .sendrecv)
        _ = try await b.addTransceiver(kind: .audio, direction: .sendrecv)
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        try await a.attachAudioTone(to: audio, toneLevelDbfs: -20)
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()
        let leg = try #require(await a.leg)
        let parts = Parts(
            connection: Weak(a), leg: Weak(leg), transport: Weak(leg.transport), ice: Weak(leg.transport.ice))
        await a.close()
        await b.close()
        return parts
    }

    @Test func aClosedConnectionFreesItsLegTransportAndICEAgent() async throws {
        let loop = GLibLoop(name: "pc-teardown")
        defer { loop.stop() }
        let parts = try await connectAndClose(on: loop)
        try await until("the closed connection's leg, transport and ICE agent freed", within: .seconds(10)) {
            parts.alive.isEmpty
        }
    }
}
