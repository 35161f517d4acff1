@testable import CallsClient
import Foundation
import Testing

/// STUN/TURN host names are looked up on a thread of their own, within a deadline: a resolver
/// that hangs costs the deadline, not the share.
@Suite struct ICEResolveTests {
    @Test func aLookupThatHangsIsGivenUpAtTheDeadline() async throws {
        let started = ContinuousClock.now
        await #expect(throws: ICEError.resolutionTimedOut(host: "turn.example.net", after: .milliseconds(200))) {
            try await ICELocalAddresses.resolve("turn.example.net", deadline: .milliseconds(200)) { _ in
                Thread.sleep(forTimeInterval: 3)  // getaddrinfo with a DNS server that never answers
                return "192.0.2.1"
            }
        }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func aQuickLookupIsUsedAndAFailedOneSaysSo() async throws {
        #expect(try await ICELocalAddresses.resolve("turn.example.net", deadline: .seconds(5)) { _ in "192.0.2.7" }
            == "192.0.2.7")
        await #expect(throws: ICEError.unresolvableHost("nowhere.invalid")) {
            try await ICELocalAddresses.resolve("nowhere.invalid", deadline: .seconds(5)) { _ in nil }
        }
        #expect(try await ICELocalAddresses.resolve("192.0.2.9") { _ in Issue.record("looked up"); return nil }
            == "192.0.2.9")
    }

    @Test func serversAreLookedUpTogetherAndKeepTheirOrder() async throws {
        let started = ContinuousClock.now
        let addresses = try await ICELocalAddresses.resolveAll(["a.example", "192.0.2.2", "c.example", "d.example"],
                                                               deadline: .seconds(5)) { host in
            Thread.sleep(forTimeInterval: 1)
            return ["a.example": "192.0.2.1", "c.example": "192.0.2.3", "d.example": "192.0.2.4"][host]
        }
        #expect(addresses == ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"])
        #expect(ContinuousClock.now - started < .milliseconds(2500), "one second for all, not one each")
    }

    @Test func theTimeoutReadsAsASentence() {
        #expect(ICEError.resolutionTimedOut(host: "turn.example.net", after: .seconds(5)).description
            == "ice: the STUN/TURN host \"turn.example.net\" did not resolve within 5 s; check the name and the "
            + "network's DNS")
    }
}
