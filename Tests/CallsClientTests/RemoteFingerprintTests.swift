@testable import CallsClient
import SDPWire
import Testing
@testable import CallMedia
@testable import WebRTCTransport

/// Every `a=fingerprint` of the peer's description counts (RFC 8122 §5: a description may carry
/// several, in several hashes, at session and media level).
@Suite struct RemoteFingerprintTests {
    static let sha1 = "sha-1 " + (0..<20).map { _ in "AA" }.joined(separator: ":")
    static let sha256 = "sha-256 " + (0..<32).map { _ in "BB" }.joined(separator: ":")
    static let sha512 = "sha-512 " + (0..<64).map { _ in "CC" }.joined(separator: ":")

    static func offer(session: [String], media: [String]) throws -> SessionDescription {
        let lines =
            ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0"] + session + [
                "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:0", "a=ice-ufrag:abcd",
                "a=ice-pwd:abcdefghijklmnopqrstuvwx", "a=setup:actpass", "a=rtcp-mux", "a=rtpmap:96 VP8/90000"
            ] + media
        return try SessionDescription.parse(lines.joined(separator: "\r\n") + "\r\n")
    }

    @Test func aSHA1FingerprintFirstDoesNotHideASHA256OneAfterIt() throws {
        let offer = try Self.offer(session: [], media: ["a=fingerprint:\(Self.sha1)", "a=fingerprint:\(Self.sha256)"])
        let transport = try SessionNegotiation.remoteTransport(offer, remoteIsAnswer: false)
        #expect(transport.fingerprints.map(\.sdpValue) == [Self.sha1, Self.sha256])
        #expect(DTLSFingerprint.accepted(transport.fingerprints).map(\.sdpValue) == [Self.sha256])
    }

    @Test func sessionAndMediaLevelFingerprintsAllCount() throws {
        let offer = try Self.offer(session: ["a=fingerprint:\(Self.sha512)"], media: ["a=fingerprint:\(Self.sha1)"])
        let transport = try SessionNegotiation.remoteTransport(offer, remoteIsAnswer: false)
        #expect(transport.fingerprints.map(\.sdpValue) == [Self.sha512, Self.sha1])
        let sha1Only = try Self.offer(session: [], media: ["a=fingerprint:\(Self.sha1)"])
        #expect(
            DTLSFingerprint.accepted(
                try SessionNegotiation.remoteTransport(sha1Only, remoteIsAnswer: false).fingerprints
            )
            .map(\.sdpValue) == [Self.sha1], "SHA-1 when nothing stronger is offered")
    }

    /// The handshake accepts a certificate that matches any accepted fingerprint (here the
    /// second), and refuses one that matches only a SHA-1 fingerprint offered beside a SHA-256 one.
    @Test func theCertificateMayMatchAnyStrongFingerprint() throws {
        let decoy = try DTLSFingerprint(algorithm: .sha256, digest: Array(repeating: 0xEE, count: 32))
        let serverCertificate = try DTLSCertificate()
        let pair = try DTLSPair(
            serverCertificate: serverCertificate, clientExpectsAny: [decoy, serverCertificate.fingerprint])
        pair.handshake()
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        #expect(pair.client.peerFingerprint == serverCertificate.fingerprint)

        let sha1 = try DTLSFingerprint.of(certificate: serverCertificate.certificate, algorithm: .sha1)
        let weak = try DTLSPair(serverCertificate: serverCertificate, clientExpectsAny: [sha1, decoy])
        weak.handshake()
        guard case let .failed(.fingerprintMismatch(expected, _)) = weak.client.state else {
            Issue.record("client is \(weak.client.state)")
            return
        }
        #expect(expected == decoy.sdpValue, "only the SHA-256 one counts")

        let sha1Alone = try DTLSPair(serverCertificate: serverCertificate, clientExpectsAny: [sha1])
        sha1Alone.handshake()
        #expect(sha1Alone.client.state == .connected, "SHA-1 when nothing stronger is offered")
    }
}
