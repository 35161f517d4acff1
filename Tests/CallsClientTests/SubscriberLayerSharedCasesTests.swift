import CallsClient
import Foundation
import Testing

/// The marble cases `SubscriberLayerRule` and the browser's Janus room client
/// (Sources/CallsServer/Client/layerrule.js) share: Tests/Ladder/subscriber-layer-cases.json. Each
/// case's timeline goes through a rule, and the layer asked for after every second must be what the
/// file says. The browser's rule is held to the same file in headless Chromium
/// (scripts/gates/client.py). With SHARECTL_RECORD_LAYER_CASES=1 this test writes what the Swift
/// rule does into the file instead (for a new case; review the diff).
@Suite struct SubscriberLayerSharedCasesTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Ladder/subscriber-layer-cases.json").path

    /// One second of the timeline's alphabet, on `layer` (whose rate a good second carries).
    static func second(_ character: Character, layer: Int, nowMicros: Int64) -> SubscriberLayerRule.Second? {
        let rate = [150, 500, 1500][min(max(layer, 0), 2)]
        func make(_ packets: Int, _ lost: Int, _ frames: Int, _ queued: Double?, _ kbps: Int)
            -> SubscriberLayerRule.Second
        {
            .init(
                nowMicros: nowMicros, packets: packets, lost: lost, framesDecoded: frames, queuingDelayMs: queued,
                receivedKbps: kbps)
        }
        switch character {
        case "g": return make(100, 0, 30, 10, rate)
        case "n": return make(100, 0, 30, nil, rate)
        case "m": return make(96, 4, 30, 10, rate)
        case "l": return make(85, 15, 20, 20, 380)
        case "C": return make(85, 15, 20, 20, 1200)
        case "q": return make(100, 0, 25, 200, 380)
        case "f": return make(100, 0, 0, 10, rate)
        case "w": return make(0, 0, 0, nil, 0)
        default: return nil
        }
    }

    static func run(timeline: String, top: Int) -> String? {
        var rule = SubscriberLayerRule(top: top)
        var layers = ""
        for (index, character) in timeline.enumerated() {
            guard let second = second(character, layer: rule.layer, nowMicros: Int64(index + 1) * 1_000_000) else {
                return nil
            }
            _ = rule.update(second)
            layers += String(rule.layer)
        }
        return layers
    }

    @Test func theSwiftRuleGivesTheSharedAnswers() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.path))
        var file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var cases = try #require(file["cases"] as? [[String: Any]])
        #expect(cases.count >= 12)
        let recording = ProcessInfo.processInfo.environment["SHARECTL_RECORD_LAYER_CASES"] == "1"
        for index in cases.indices {
            let name = cases[index]["name"] as? String ?? "?"
            let timeline = try #require(cases[index]["timeline"] as? String)
            let got = try #require(Self.run(timeline: timeline, top: cases[index]["top"] as? Int ?? 2), "\(name)")
            if recording {
                cases[index]["expect"] = got
            } else {
                #expect(got == cases[index]["expect"] as? String, "\(name): \(timeline)")
            }
        }
        if recording {
            file["cases"] = cases
            let written = try JSONSerialization.data(withJSONObject: file, options: [.prettyPrinted, .sortedKeys])
            try written.write(to: URL(fileURLWithPath: Self.path))
        }
    }
}
