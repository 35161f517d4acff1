import Foundation
@testable import SDPWire
import Testing

/// Inputs FuzzSDP found, kept in Fixtures/fuzz/: each must throw or round-trip, never crash.
@Suite struct FuzzRegressionTests {
    static let names: [String] = {
        guard
            let directory = Bundle.module.url(forResource: "Fixtures", withExtension: nil)?.appendingPathComponent(
                "fuzz"),
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return files.sorted()
    }()

    @Test func regressionsArePresent() {
        #expect(!FuzzRegressionTests.names.isEmpty)
    }

    @Test(arguments: names)
    func replay(name: String) throws {
        let text = try fixture("fuzz/" + name)
        if let candidate = try? ICECandidate(parsing: text) {
            #expect(try ICECandidate(parsing: candidate.candidateString) == candidate)
        }
        if let description = try? SessionDescription.parse(text) {
            try expectFixedPoint(description)
        }
    }

    /// A whole description pasted where a candidate was expected once parsed as one candidate
    /// whose extension values held line breaks, and did not survive a round trip.
    @Test func candidateWithLineBreaksIsRefused() {
        #expect(throws: SDPError.self) { try ICECandidate(parsing: "candidate:1 1 udp 1 h 9 typ host x a\r\nb") }
        #expect(throws: SDPError.self) { try ICECandidate(parsing: "candidate:1 1 udp 1 h 9 typ host x a\nb") }
        #expect(throws: Never.self) { try ICECandidate(parsing: "candidate:1 1 udp 1 h 9 typ host x a\r\n\r\n") }
    }
}
