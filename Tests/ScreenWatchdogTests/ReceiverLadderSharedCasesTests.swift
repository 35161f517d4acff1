import Foundation
import ScreenWatchdog
import Testing

/// The marble cases the Swift ladder and the browser's (Sources/CallsServer/Client/ladder.js)
/// share: Tests/Ladder/receiver-ladder-cases.json. Each case's runs go through one ladder with
/// `ReceiverLadderTests.run`, and every step (action, subject, reason), notice, marble and final
/// rung must be what the file says. The browser's ladder is held to the same file in headless
/// Chromium (scripts/gates/client.py). With SHARECTL_RECORD_LADDER_CASES=1 this test writes what
/// the Swift ladder does into the file instead (for a new case; review the diff).
@Suite struct ReceiverLadderSharedCasesTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Ladder/receiver-ladder-cases.json").path

    struct Outcome: Equatable, CustomStringConvertible {
        var marbles: [String: String]
        var notices: [String]
        var steps: [String]
        var rungs: [String: String]

        var json: [String: Any] { ["marbles": marbles, "notices": notices, "steps": steps, "rungs": rungs] }

        init(_ run: ReceiverLadderTests.Run, people: [String]) {
            marbles = run.marbles
            notices = run.notices
            steps = run.steps.map(\.description)
            rungs = Dictionary(uniqueKeysWithValues: people.map { ($0, run.ladder.rung(of: $0).description) })
        }

        init?(_ json: Any?) {
            guard let object = json as? [String: Any], let marbles = object["marbles"] as? [String: String],
                let notices = object["notices"] as? [String], let steps = object["steps"] as? [String],
                let rungs = object["rungs"] as? [String: String]
            else { return nil }
            self.marbles = marbles
            self.notices = notices
            self.steps = steps
            self.rungs = rungs
        }

        var description: String { "marbles \(marbles), notices \(notices), rungs \(rungs), steps \(steps)" }
    }

    static func load() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return document
    }

    /// Runs one case's runs on one ladder, as the browser's test does.
    static func play(_ runs: [[String: Any]]) -> [Outcome] {
        let tests = ReceiverLadderTests()
        let start = ContinuousClock.now
        var ladder = ReceiverLadder()
        var outcomes: [Outcome] = []
        for run in runs {
            let timelines = run["timelines"] as? [String: String] ?? [:]
            let at = run["at"] as? Int ?? 0
            let result = tests.run(timelines, ladder: ladder, startAt: start + .seconds(at))
            ladder = result.ladder
            outcomes.append(Outcome(result, people: timelines.keys.sorted()))
        }
        return outcomes
    }

    @Test func theSwiftLadderGivesWhatTheSharedCasesSay() throws {
        var document = try Self.load()
        var cases = try #require(document["cases"] as? [[String: Any]])
        #expect(cases.count >= 15)
        let recording = ProcessInfo.processInfo.environment["SHARECTL_RECORD_LADDER_CASES"] == "1"
        for index in cases.indices {
            let name = cases[index]["name"] as? String ?? "case \(index)"
            var runs = try #require(cases[index]["runs"] as? [[String: Any]], "\(name): no runs")
            let outcomes = Self.play(runs)
            for (number, outcome) in outcomes.enumerated() {
                if recording {
                    runs[number]["expect"] = outcome.json
                } else {
                    let expected = Outcome(runs[number]["expect"])
                    #expect(expected == outcome, "\(name), run \(number + 1)")
                }
            }
            cases[index]["runs"] = runs
        }
        guard recording else { return }
        document["cases"] = cases
        let data = try JSONSerialization.data(
            withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try (data + Data("\n".utf8)).write(to: URL(fileURLWithPath: Self.path))
    }

    /// The hand-written expectations of ReceiverLadderTests agree with the file where they overlap,
    /// so the file cannot drift from them.
    @Test func theFileAgreesWithTheHandWrittenMarbles() throws {
        let document = try Self.load()
        let cases = try #require(document["cases"] as? [[String: Any]])
        func expected(_ name: String, run: Int = 0) -> Outcome? {
            let found = cases.first { $0["name"] as? String == name }
            return Outcome((found?["runs"] as? [[String: Any]])?[run]["expect"])
        }
        #expect(
            expected("a stall that nothing mends climbs every rung and gives up")?.marbles["bea"]
                == "K-K-K-KR---------A---------G--")
        #expect(expected("a keyframe that mends the view ends the ladder and the notice")?.marbles["bea"] == "K-r-")
        #expect(
            expected("no share again unless frames left since the rebuild")?.marbles["bea"]
                == "K-K-K-KR---------h--A---------G-")
        #expect(
            expected("a share again is allowed again after five minutes", run: 1)?.marbles["bea"]
                == "K-K-K-KR---------A---------G--")
        #expect(
            expected("a share again too soon is held", run: 1)?.marbles["bea"] == "K-K-K-KR---------h---------G--")
        #expect(expected("someone leaving takes their notice away")?.steps.last == "notice bea: bea left the call")
    }
}
