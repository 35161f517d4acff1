import CallsClient
import Foundation
import GLibLoop
import ShareCore
import Testing
@testable import CallMedia
@testable import WebRTCTransport

/// Descriptions a peer connection must refuse, each with a reason a person can act on.
@Suite struct PeerConnectionRefusalTests {
    /// A offers sendonly video, B answers; returns both and B's answer text.
    private func exchange(loop: GLibLoop) async throws -> (PeerConnection, PeerConnection, String) {
        let a = try PeerConnection(
            loop: loop, configuration: .init(loopbackOnly: true, connectTimeout: .seconds(15)), logger: .disabled)
        let b = try PeerConnection(
            loop: loop, configuration: .init(loopbackOnly: true, connectTimeout: .seconds(15)), logger: .disabled)
        try await a.addTransceiver(kind: .video, direction: .sendonly)
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        return (a, b, try await b.createAnswer())
    }

    @Test func garbageIsNotSDP() async throws {
        let loop = GLibLoop(name: "pc-garbage")
        defer { loop.stop() }
        let (a, b, _) = try await exchange(loop: loop)
        await #expect(throws: PeerConnectionError.self) {
            try await a.setRemoteDescription("hello, I am not SDP", type: .answer)
        }
        do {
            try await a.setRemoteDescription("<html>502 Bad Gateway</html>", type: .answer)
        } catch {
            guard case .notSDP = error else { Issue.record("expected notSDP, got \(error)"); return }
            #expect(error.description.hasPrefix("the remote description is not valid SDP: "), "\(error)")
        }
        #expect(a.state == .new, "a refused description changes nothing")
        await a.close()
        await b.close()
    }

    @Test func answerWithoutFingerprintIsRefused() async throws {
        let loop = GLibLoop(name: "pc-nofp")
        defer { loop.stop() }
        let (a, b, answer) = try await exchange(loop: loop)
        let stripped = answer.split(separator: "\r\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("a=fingerprint:") }.joined(separator: "\r\n")
        #expect(stripped != answer)
        do {
            try await a.setRemoteDescription(stripped, type: .answer)
            Issue.record("an answer without a fingerprint was taken")
        } catch {
            #expect(error == .unusableDescription("the answer has no DTLS fingerprint (a=fingerprint)"), "\(error)")
        }
        #expect(a.state == .new)
        // An answer with no offer is refused too.
        await #expect(throws: PeerConnectionError.self) { try await b.setRemoteDescription(answer, type: .answer) }
        await a.close()
        await b.close()
    }

    @Test func wrongFingerprintFailsTheConnection() async throws {
        let loop = GLibLoop(name: "pc-wrongfp")
        defer { loop.stop() }
        let (a, b, answer) = try await exchange(loop: loop)
        let other = try DTLSCertificate().fingerprint
        let tampered = answer.split(separator: "\r\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("a=fingerprint:") ? "a=fingerprint:\(other.sdpValue)" : String(line)
        }.joined(separator: "\r\n")
        try await a.setRemoteDescription(tampered, type: .answer)
        do {
            try await a.waitUntilConnected()
            Issue.record("connected despite the wrong fingerprint")
        } catch {
            #expect(
                error.description.contains("fingerprint") && error.description.contains("does not match"), "\(error)")
        }
        guard case .failed(let reason) = a.state else {
            Issue.record("A is \(a.state), not failed")
            return
        }
        #expect(reason.contains("DTLS"), "\(reason)")
        await a.close()
        await b.close()
    }
}
