@testable import CallsClient
import Foundation
import GLibLoop
import Testing
@testable import CallMedia

/// Trickled candidates may overtake the description they belong to (signalling over two paths).
@Suite struct PeerConnectionEarlyCandidateTests {
    /// 64 kept, the 65th reported once, the rest dropped quietly; handed over once, in order.
    @Test func earlyCandidatesAreCappedAndTakenOnce() {
        var early = EarlyCandidates()
        let outcomes = (0..<100).map { early.add("candidate:\($0) 1 udp 1 192.0.2.1 \($0) typ host") }
        #expect(outcomes.prefix(64).allSatisfy { $0 == .kept })
        #expect(outcomes[64] == .firstDropped)
        #expect(outcomes.dropFirst(65).allSatisfy { $0 == .dropped })
        early.end()
        let taken = early.take()
        #expect(taken.lines.count == 64 && taken.lines.first == "candidate:0 1 udp 1 192.0.2.1 0 typ host")
        #expect(taken.endOfCandidates)
        #expect(early.take().lines.isEmpty, "applied once")
    }

    /// B hears A's candidates, then a flood of made-up ones, before A's offer (which carries none):
    /// B keeps the first 64, applies them once the offer comes, and the two connect.
    @Test func candidatesBeforeTheOfferWaitForIt() async throws {
        let loop = GLibLoop(name: "pc-early")
        defer { loop.stop() }
        let a = try PeerConnection(
            loop: loop, configuration: .init(loopbackOnly: true, connectTimeout: .seconds(15)), logger: .disabled)
        let b = try PeerConnection(
            loop: loop, configuration: .init(loopbackOnly: true, connectTimeout: .seconds(15)), logger: .disabled)
        try await a.addTransceiver(kind: .video, direction: .sendonly)
        let offer = try await a.createOffer()
        let lines = offer.split(separator: "\r\n").map(String.init)
        let candidates = lines.filter { $0.hasPrefix("a=candidate:") }
        #expect(!candidates.isEmpty)
        let bare =
            lines.filter { !$0.hasPrefix("a=candidate:") && $0 != "a=end-of-candidates" }.joined(separator: "\r\n")
            + "\r\n"

        for line in candidates { try await b.addRemoteCandidate(line) }
        for port in 1...200 { try await b.addRemoteCandidate("candidate:9\(port) 1 udp 1 192.0.2.1 \(port) typ host") }
        try await b.endOfRemoteCandidates()
        try await b.setRemoteDescription(bare, type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        try await b.waitUntilConnected()
        try await a.waitUntilConnected()
        await a.close()
        await b.close()
    }
}
