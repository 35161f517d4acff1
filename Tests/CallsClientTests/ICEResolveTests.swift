@testable import CallsClient
import Foundation
import Synchronization
import Testing
@testable import WebRTCTransport

/// STUN/TURN host names are looked up on a thread of their own, within a deadline: a resolver
/// that hangs costs the deadline, not the share.
@Suite struct ICEResolveTests {
    /// The lookup hangs until the test lets it go, after `resolve` has answered: so the answer can
    /// only have come from the deadline. (No wall-clock check: the test runs beside others that
    /// hold the machine's two cores.)
    @Test func aLookupThatHangsIsGivenUpAtTheDeadline() async throws {
        let release = DispatchSemaphore(value: 0)
        let lookupReturned = Counter()
        await #expect(throws: ICEError.resolutionTimedOut(host: "turn.example.net", after: .milliseconds(200))) {
            try await ICELocalAddresses.resolve("turn.example.net", deadline: .milliseconds(200)) { _ in
                // getaddrinfo with a DNS server that never answers. (Fifteen minutes, not two: under
                // ThreadSanitizer, with the other tests holding the pool, the task that takes the
                // deadline's answer once waited over two minutes for a thread.)
                _ = release.wait(timeout: .now() + 900)
                lookupReturned.add()
                return "192.0.2.1"
            }
        }
        let returnedFirst = lookupReturned.value
        #expect(returnedFirst == 0, "the answer came before the lookup ended")
        release.signal()
    }

    @Test func aQuickLookupIsUsedAndAFailedOneSaysSo() async throws {
        #expect(
            try await ICELocalAddresses.resolve("turn.example.net", deadline: .seconds(5)) { _ in "192.0.2.7" }
                == "192.0.2.7")
        await #expect(throws: ICEError.unresolvableHost("nowhere.invalid")) {
            try await ICELocalAddresses.resolve("nowhere.invalid", deadline: .seconds(5)) { _ in nil }
        }
        #expect(
            try await ICELocalAddresses.resolve("192.0.2.9") { _ in
                Issue.record("looked up"); return nil
            }
                == "192.0.2.9")
    }

    /// Each lookup waits until all three names are being looked up at once; looked up one after
    /// another, the first would wait in vain (60 s) and the deadline (90 s) would not save it.
    @Test func serversAreLookedUpTogetherAndKeepTheirOrder() async throws {
        let inFlight = Counter()
        let allStarted = DispatchSemaphore(value: 0)
        let addresses = try await ICELocalAddresses.resolveAll(
            ["a.example", "192.0.2.2", "c.example", "d.example"],
            deadline: .seconds(90)
        ) { host in
            if inFlight.add() == 3 {
                for _ in 0..<3 { allStarted.signal() }
            }
            guard allStarted.wait(timeout: .now() + 60) == .success else { return nil }
            return ["a.example": "192.0.2.1", "c.example": "192.0.2.3", "d.example": "192.0.2.4"][host]
        }
        #expect(addresses == ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"])
    }

    @Test func theTimeoutReadsAsASentence() {
        #expect(
            ICEError.resolutionTimedOut(host: "turn.example.net", after: .seconds(5)).description
                == "ice: the STUN/TURN host \"turn.example.net\" did not resolve within 5 s; check the name and the "
                + "network's DNS")
    }
}

/// A count shared with lookup threads.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    @discardableResult func add() -> Int { count.add(1, ordering: .sequentiallyConsistent).newValue }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
}
