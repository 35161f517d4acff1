@testable import CallsClient
import Testing
@testable import WebRTCTransport

@Suite struct DTLSCertificateTests {
    @Test func freshCertificateIsSelfSignedP256WithSharectlNameAndThirtyDaysEitherSide() throws {
        let certificate = try DTLSCertificate()
        #expect(certificate.subjectCommonName == "sharectl")
        let validity = certificate.validityFromNow
        let thirtyDays = 30 * 86_400
        #expect(abs(validity.notBefore + thirtyDays) < 120)
        #expect(abs(validity.notAfter - thirtyDays) < 120)
        #expect(!certificate.serialHex.isEmpty)
    }

    @Test func everyCertificateHasItsOwnKeySerialAndFingerprint() throws {
        let a = try DTLSCertificate()
        let b = try DTLSCertificate()
        #expect(a.fingerprint != b.fingerprint)
        #expect(a.serialHex != b.serialHex)
    }

    @Test func fingerprintIsSHA256InUppercaseColonSeparatedHex() throws {
        let value = try DTLSCertificate().fingerprint.sdpValue
        #expect(value.hasPrefix("sha-256 "))
        let hex = value.dropFirst("sha-256 ".count)
        let pairs = hex.split(separator: ":", omittingEmptySubsequences: false)
        #expect(pairs.count == 32)
        for pair in pairs {
            #expect(pair.count == 2)
            #expect(pair.allSatisfy { "0123456789ABCDEF".contains($0) })
        }
    }

    @Test func fingerprintParsesBackFromItsSDPValue() throws {
        let fingerprint = try DTLSCertificate().fingerprint
        #expect(try DTLSFingerprint(sdpValue: fingerprint.sdpValue) == fingerprint)
        // Hash names and hex digits are read without regard to case.
        #expect(try DTLSFingerprint(sdpValue: fingerprint.sdpValue.uppercased()) == fingerprint)
        #expect(try DTLSFingerprint(sdpValue: fingerprint.sdpValue.lowercased()) == fingerprint)
    }

    @Test func fingerprintOfKnownBytesIsFormattedExactly() throws {
        let fingerprint = try DTLSFingerprint(
            algorithm: .sha1, digest: [0x00, 0x0A, 0xFF] + Array(repeating: 0x5C, count: 17))
        #expect(fingerprint.sdpValue == "sha-1 00:0A:FF:" + Array(repeating: "5C", count: 17).joined(separator: ":"))
    }

    @Test(arguments: [
        ("sha-256", "expected a hash name and a digest"),
        ("sha-256 AB:CD", "sha-256 digests are 32 bytes"),
        ("md5 AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89", "unknown hash \"md5\""),
        ("sha-1 AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:0G", "\"0G\" is not two hex digits"),
        ("sha-1 ABC:D:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01", "\"ABC\" is not two hex digits"),
        ("sha-1 AB::EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01", "\"\" is not two hex digits")
    ])
    func malformedFingerprintsAreRefusedWithAReason(value: String, reason: String) {
        do {
            _ = try DTLSFingerprint(sdpValue: value)
            Issue.record("\(value) was accepted")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test func fingerprintsDifferingInOneByteOrAlgorithmAreNotEqual() throws {
        let digest = [UInt8](repeating: 0x11, count: 32)
        var other = digest
        other[31] = 0x10
        #expect(
            try DTLSFingerprint(algorithm: .sha256, digest: digest)
                != DTLSFingerprint(algorithm: .sha256, digest: other))
        #expect(
            try DTLSFingerprint(algorithm: .sha256, digest: digest)
                == DTLSFingerprint(algorithm: .sha256, digest: digest))
        let long = [UInt8](repeating: 0x11, count: 48)
        #expect(
            try DTLSFingerprint(algorithm: .sha384, digest: long) != DTLSFingerprint(algorithm: .sha256, digest: digest)
        )
    }

    @Test func roleFollowsTheSetupAttribute() {
        #expect(DTLSRole(localSetup: "active") == .client)
        #expect(DTLSRole(localSetup: "passive") == .server)
        #expect(DTLSRole(localSetup: "actpass") == nil)
        #expect(DTLSRole(remoteSetup: "active") == .server)
        #expect(DTLSRole(remoteSetup: "passive") == .client)
        #expect(DTLSRole(remoteSetup: "actpass") == .client)
        #expect(DTLSRole(remoteSetup: "holdconn") == nil)
        #expect(DTLSRole.client.setupAttribute == "active")
        #expect(DTLSRole.server.setupAttribute == "passive")
    }
}
