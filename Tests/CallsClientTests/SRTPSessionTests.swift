@testable import CallsClient
import Foundation
import Synchronization
import TestSupport
import Testing
@testable import WebRTCTransport

/// An RTP packet: v=2, PT 96, the given sequence number, timestamp 0x01020304, SSRC 0x11223344.
func rtpPacket(sequence: UInt16, payload: [UInt8] = Array("a frame of video".utf8), ssrc: UInt32 = 0x1122_3344)
    -> [UInt8]
{
    [
        0x80, 0x60, UInt8(sequence >> 8), UInt8(sequence & 0xFF),  // v=2, PT=96, sequence
        0x01, 0x02, 0x03, 0x04,  // timestamp
        UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)
    ]  // SSRC
        + payload
}

/// An RTCP receiver report with one report block (RFC 3550 §6.4.2).
let rtcpReceiverReport: [UInt8] = [
    0x81, 0xC9, 0x00, 0x07,  // v=2 RC=1, PT=201 RR, length=7 words
    0x55, 0x66, 0x77, 0x88,  // sender SSRC
    0x11, 0x22, 0x33, 0x44,  // report block: source SSRC
    0x00, 0x00, 0x00, 0x00,  // fraction lost, cumulative lost
    0x00, 0x00, 0x10, 0x00,  // extended highest sequence
    0x00, 0x00, 0x00, 0x20,  // jitter
    0x00, 0x00, 0x00, 0x00,  // LSR
    0x00, 0x00, 0x00, 0x00
]  // DLSR

/// Keying material from a counting exporter output: bytes 0, 1, 2, …
func countingKeys(_ profile: SRTPProfile, offset: UInt8 = 0) throws -> SRTPKeyingMaterial {
    try SRTPKeyingMaterial(
        profile: profile,
        exported: (0..<SRTPKeyingMaterial.exportLength(for: profile)).map { UInt8($0) &+ offset })
}

@Suite struct SRTPSessionTests {
    @Test func keyingMaterialSplitsAsRFC5764Section4_2Says() throws {
        // AES_CM_128_HMAC_SHA1_80: 16-byte keys, 14-byte salts, 60 bytes in all.
        let cm = try countingKeys(.aes128CMHMACSHA1_80)
        #expect(SRTPKeyingMaterial.exportLength(for: .aes128CMHMACSHA1_80) == 60)
        #expect(cm.clientWriteKey == Array(0..<16))
        #expect(cm.serverWriteKey == Array(16..<32))
        #expect(cm.clientWriteSalt == Array(32..<46))
        #expect(cm.serverWriteSalt == Array(46..<60))
        // AEAD_AES_128_GCM: 16-byte keys, 12-byte salts, 56 bytes in all.
        let gcm = try countingKeys(.aeadAES128GCM)
        #expect(SRTPKeyingMaterial.exportLength(for: .aeadAES128GCM) == 56)
        #expect(gcm.clientWriteKey == Array(0..<16))
        #expect(gcm.serverWriteKey == Array(16..<32))
        #expect(gcm.clientWriteSalt == Array(32..<44))
        #expect(gcm.serverWriteSalt == Array(44..<56))
        // Secrets never print.
        #expect(!"\(gcm)".contains("0, 1, 2"))
        #expect(throws: SRTPError.invalidKeys("SRTP_AEAD_AES_128_GCM needs 56 bytes of keying material, got 60")) {
            try SRTPKeyingMaterial(profile: .aeadAES128GCM, exported: Array(repeating: 0, count: 60))
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtpAndRTCPRoundTripBothWays(profile: SRTPProfile) throws {
        let keys = try countingKeys(profile)
        let client = try SRTPSession(keys: keys, role: .client)
        let server = try SRTPSession(keys: keys, role: .server)
        let tag = profile == .aeadAES128GCM ? 16 : 10
        for sequence: UInt16 in [1, 2, 3, 0xFFFF, 0] {
            let packet = rtpPacket(sequence: sequence)
            let protected = try client.protect(rtp: packet)
            #expect(protected.count == packet.count + tag)
            #expect(Array(protected.prefix(12)) == Array(packet.prefix(12)))  // the header stays in clear
            #expect(Array(protected[12..<packet.count]) != Array(packet[12...]))  // the payload does not
            #expect(try server.unprotect(srtp: protected) == packet)
            // And the other way, with the other key.
            let back = try server.protect(rtp: packet)
            #expect(back != protected)
            #expect(try client.unprotect(srtp: back) == packet)
        }
        let protectedReport = try client.protectRTCP(rtcpReceiverReport)
        #expect(protectedReport.count == rtcpReceiverReport.count + 4 + tag)  // SRTCP index, then tag
        #expect(Array(protectedReport.prefix(8)) == Array(rtcpReceiverReport.prefix(8)))
        #expect(try server.unprotectRTCP(protectedReport) == rtcpReceiverReport)
        #expect(try client.unprotectRTCP(server.protectRTCP(rtcpReceiverReport)) == rtcpReceiverReport)
    }

    @Test(arguments: SRTPProfile.allCases)
    func aReplayedPacketIsRefusedAsReplay(profile: SRTPProfile) throws {
        let keys = try countingKeys(profile)
        let client = try SRTPSession(keys: keys, role: .client)
        let server = try SRTPSession(keys: keys, role: .server)
        let first = try client.protect(rtp: rtpPacket(sequence: 100))
        let second = try client.protect(rtp: rtpPacket(sequence: 101))
        _ = try server.unprotect(srtp: second)
        _ = try server.unprotect(srtp: first)  // out of order but new: accepted
        #expect(throws: SRTPError.replayed) { try server.unprotect(srtp: first) }
        #expect(throws: SRTPError.replayed) { try server.unprotect(srtp: second) }
        let report = try client.protectRTCP(rtcpReceiverReport)
        _ = try server.unprotectRTCP(report)
        #expect(throws: SRTPError.replayed) { try server.unprotectRTCP(report) }
        // The session carries on.
        #expect(try server.unprotect(srtp: client.protect(rtp: rtpPacket(sequence: 102))) == rtpPacket(sequence: 102))
    }

    @Test(arguments: SRTPProfile.allCases)
    func aTamperedPacketFailsAuthentication(profile: SRTPProfile) throws {
        let keys = try countingKeys(profile)
        let client = try SRTPSession(keys: keys, role: .client)
        let server = try SRTPSession(keys: keys, role: .server)
        let protected = try client.protect(rtp: rtpPacket(sequence: 7))
        for index in [1, 12, protected.count - 1] {  // a header bit, a payload byte, the tag
            var tampered = protected
            tampered[index] ^= 0x01
            #expect(throws: SRTPError.authenticationFailed) { try server.unprotect(srtp: tampered) }
        }
        var report = try client.protectRTCP(rtcpReceiverReport)
        report[10] ^= 0x80
        #expect(throws: SRTPError.authenticationFailed) { try server.unprotectRTCP(report) }
        // The genuine packet still goes through after the forgeries.
        #expect(try server.unprotect(srtp: protected) == rtpPacket(sequence: 7))
    }

    @Test func otherKeysFailAuthentication() throws {
        let sender = try SRTPSession(keys: countingKeys(.aes128CMHMACSHA1_80), role: .client)
        let stranger = try SRTPSession(keys: countingKeys(.aes128CMHMACSHA1_80, offset: 1), role: .server)
        #expect(throws: SRTPError.authenticationFailed) {
            try stranger.unprotect(srtp: sender.protect(rtp: rtpPacket(sequence: 1)))
        }
        // A sender's own packets do not unprotect with its own inbound (the peer's) key either.
        #expect(throws: SRTPError.authenticationFailed) {
            try sender.unprotect(srtp: sender.protect(rtp: rtpPacket(sequence: 2)))
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func shortAndGarbagePacketsAreErrorsNotCrashes(profile: SRTPProfile) throws {
        let session = try SRTPSession(keys: countingKeys(profile), role: .server)
        #expect(throws: SRTPError.packetTooShort(what: "RTP packet", got: 5, need: 12)) {
            try session.protect(rtp: [0x80, 0x60, 0, 1, 0])
        }
        #expect(throws: SRTPError.packetTooShort(what: "SRTP packet", got: 0, need: 12)) {
            try session.unprotect(srtp: [])
        }
        #expect(throws: SRTPError.packetTooShort(what: "SRTCP packet", got: 11, need: 12)) {
            try session.unprotectRTCP(Array(repeating: 0x81, count: 11))
        }
        var random = SplitMix64(seed: 7)
        for length in [12, 13, 20, 27, 28, 29, 40, 200, 1500] {
            for _ in 0..<20 {
                var garbage = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                garbage[0] = 0x80 | (garbage[0] & 0x3F)
                #expect(throws: SRTPError.self) { try session.unprotect(srtp: garbage) }
                #expect(throws: SRTPError.self) { try session.unprotectRTCP(garbage) }
            }
        }
        // A header claiming more CSRCs and extension words than the packet holds.
        let lying: [UInt8] =
            [0x9F, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE, 0xFF, 0xFF] + Array(repeating: 0, count: 16)
        #expect(throws: SRTPError.self) { try session.unprotect(srtp: lying) }
        #expect(throws: SRTPError.self) { try session.protect(rtp: lying) }
    }

    @Test func errorsReadAsSentences() {
        #expect(SRTPError.replayed.description == "srtp: packet replayed (its index was already received)")
        #expect(
            SRTPError.authenticationFailed.description
                == "srtp: authentication failed (packet damaged, forged, or under other keys)")
        #expect(
            SRTPError.packetTooShort(what: "RTP packet", got: 6, need: 12).description
                == "srtp: RTP packet too short (got 6 bytes, need 12)")
    }

    @Test(arguments: [SRTPProfile.aeadAES128GCM, .aes128CMHMACSHA1_80])
    func sessionsKeyedByARealDTLSHandshakeTalkToEachOther(profile: SRTPProfile) throws {
        let pair = try DTLSPair(clientProfiles: [profile], serverProfiles: [profile])
        pair.handshake()
        let clientKeys = try #require(pair.client.srtpKeys)
        let serverKeys = try #require(pair.server.srtpKeys)
        #expect(clientKeys.profile == profile)
        let client = try SRTPSession(keys: clientKeys, role: .client)
        let server = try SRTPSession(keys: serverKeys, role: .server)
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let packet = rtpPacket(sequence: 4242, payload: payload)
        let protected = try client.protect(rtp: packet)
        #expect(try server.unprotect(srtp: protected) == packet)
        #expect(throws: SRTPError.replayed) { try server.unprotect(srtp: protected) }
        var tampered = try client.protect(rtp: rtpPacket(sequence: 4243, payload: payload))
        tampered[500] ^= 0xFF
        #expect(throws: SRTPError.authenticationFailed) { try server.unprotect(srtp: tampered) }
        #expect(try client.unprotect(srtp: server.protect(rtp: packet)) == packet)
        #expect(try server.unprotectRTCP(client.protectRTCP(rtcpReceiverReport)) == rtcpReceiverReport)
        #expect(try client.unprotectRTCP(server.protectRTCP(rtcpReceiverReport)) == rtcpReceiverReport)
    }

    @Test func sendingAndReceivingRunOnTheirOwnThreadsAtOnce() async throws {
        let keys = try countingKeys(.aeadAES128GCM)
        let local = try SRTPSession(keys: keys, role: .client)
        let remote = try SRTPSession(keys: keys, role: .server)
        let incoming = try (0..<2000).map { try remote.protect(rtp: rtpPacket(sequence: UInt16($0))) }
        // Two plain threads (not the cooperative pool): one protects, one unprotects, same session.
        let failures = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let group = DispatchGroup()
            let counts = Counts()
            let sender = Thread {
                for sequence in 0..<2000 where (try? local.protect(rtp: rtpPacket(sequence: UInt16(sequence)))) == nil {
                    counts.add()
                }
                group.leave()
            }
            let receiver = Thread {
                for packet in incoming where (try? local.unprotect(srtp: packet)) == nil { counts.add() }
                group.leave()
            }
            group.enter()
            group.enter()
            sender.start()
            receiver.start()
            group.notify(queue: .global()) { continuation.resume(returning: counts.value) }
        }
        #expect(failures == 0)
    }
}

private final class Counts: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
