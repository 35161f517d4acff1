import Foundation
import ShareTooling
import Testing

/// The scenario files the project ships, and the parser's errors: each names the file, the field
/// and what is wrong.
@Suite struct ScenarioParserTests {
    static let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scenarios")

    static let minimal = """
        {
          "name": "x", "summary": "s", "duration": 60,
          "start": { "server": true, "sharers": [{ "name": "ana" }], "viewers": [{ "name": "bea" }] },
          "faults": [{ "kind": "decoderWedge", "at": 20, "target": "bea" }],
          "expect": [{ "kind": "viewRestored", "viewer": "bea", "fault": 0, "within": 30 }]
        }
        """

    func parse(_ text: String, parameters: [String: Double] = [:]) throws -> Scenario {
        try ScenarioParser.parse(Data(text.utf8), file: "x.json", expectedName: "x", parameters: parameters)
    }

    /// The error for `minimal` with `old` replaced by `new`.
    func error(replacing old: String, with new: String) -> String {
        #expect(Self.minimal.contains(old), "the test's replacement must apply: \(old)")
        do {
            _ = try parse(Self.minimal.replacingOccurrences(of: old, with: new))
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    @Test func everyShippedScenarioParses() throws {
        let names = [
            "capture-stall", "encoder-stall", "wedge", "wedge-sticky", "reshare", "camera-unplug", "camera-silent",
            "link-1500k", "loss-10", "soak", "wedge-browser", "wedge-shared", "encoder-stall-shared"
        ]
        for name in names {
            let scenario = try ScenarioParser.load(path: Self.scenarios.appendingPathComponent("\(name).json").path)
            #expect(scenario.name == name)
            #expect(!scenario.expect.isEmpty)
        }
        let sticky = try ScenarioParser.load(path: Self.scenarios.appendingPathComponent("wedge-sticky.json").path)
        #expect(sticky.faults.first?.kind == .decoderWedgeSticky)
        #expect(sticky.faults.first?.screenOf == "ana", "the only sharer's screen")
        #expect(
            sticky.expect.last?.describe(in: sticky)
                == "bea's view restored, or the give-up notice, within 40 s of faults[0] (decoderWedgeSticky)")
    }

    @Test func theSoakLengthIsAParameter() throws {
        let path = Self.scenarios.appendingPathComponent("soak.json").path
        #expect(try ScenarioParser.load(path: path).duration == 3600)
        let short = try ScenarioParser.load(path: path, parameters: ["length": 600])
        #expect(short.duration == 600)
        #expect(short.faults[1].times(until: short.duration) == [60], "a capture stall every 600 s from 60 s")
        #expect(
            try ScenarioParser.load(path: path, parameters: ["length": 7200]).faults[2].times(until: 7200).count == 8)
        #expect(throws: ScenarioError(file: path, path: "parameters.length", reason: "60 is below its minimum 300")) {
            try ScenarioParser.load(path: path, parameters: ["length": 60])
        }
        #expect(
            throws: ScenarioError(
                file: path, path: "parameters", reason: "no parameter 'size' to set (it declares: length)")
        ) {
            try ScenarioParser.load(path: path, parameters: ["size": 60])
        }
    }

    @Test func theMinimalScenarioFillsDefaults() throws {
        let scenario = try parse(Self.minimal)
        #expect(
            scenario.start.sharers == [
                Scenario.Sharer(
                    name: "ana", source: "synthetic", width: 1280, height: 720, fps: 30,
                    codec: "h264", policy: "balanced", camera: nil)
            ])
        #expect(scenario.start.viewers == [Scenario.Viewer(name: "bea", kind: "builtin")])
        // The model round-trips through Codable (what a runner reads).
        let again = try JSONDecoder().decode(Scenario.self, from: JSONEncoder().encode(scenario))
        #expect(again == scenario)
    }

    @Test func errorsNameTheFieldAndWhatIsWrong() {
        let cases: [(String, String, String)] = [
            ("\"duration\": 60", "\"duration\": \"sixty\"", "x.json: duration: should be a number"),
            ("\"at\": 20", "\"at\": 75", "x.json: faults[0].at: 75 s is outside the scenario (0 to 60 s)"),
            (
                "\"decoderWedge\"", "\"decoderMelt\"",
                "x.json: faults[0].kind: unknown fault 'decoderMelt' (known: captureStall, encoderStall, decoderWedge, decoderWedgeSticky, reshare, cameraUnplug, cameraSilent, link)"
            ),
            (
                "\"target\": \"bea\"", "\"target\": \"ana\"",
                "x.json: faults[0].target: a decoderWedge happens to a viewer (bea), not 'ana'"
            ),
            (
                "\"kind\": \"decoderWedge\", \"at\": 20, \"target\": \"bea\"",
                "\"kind\": \"captureStall\", \"at\": 20, \"target\": \"bea\"",
                "x.json: faults[0].target: a captureStall happens to a sharer (ana), not 'bea'"
            ),
            (
                "\"kind\": \"decoderWedge\", \"at\": 20, \"target\": \"bea\"",
                "\"kind\": \"cameraUnplug\", \"at\": 20, \"target\": \"ana\"",
                "x.json: faults[0].target: ana has no camera (give the sharer \"camera\": \"synthetic\" or \"vivid\")"
            ),
            (
                "\"kind\": \"decoderWedge\", \"at\": 20, \"target\": \"bea\"",
                "\"kind\": \"link\", \"at\": 20, \"target\": \"bea\"",
                "x.json: faults[0]: a link fault needs rateKbit, lossPercent or both"
            ),
            (
                "\"kind\": \"decoderWedge\", \"at\": 20, \"target\": \"bea\"",
                "\"kind\": \"link\", \"at\": 20, \"target\": \"bea\", \"lossPercent\": 120",
                "x.json: faults[0].lossPercent: 0 to 100, not 120.0"
            ),
            ("\"at\": 20,", "\"at\": 20, \"rateKbit\": 100,", "x.json: faults[0].rateKbit: only a link fault takes it"),
            (
                "\"at\": 20,", "\"at\": 20, \"when\": 3,",
                "x.json: faults[0].when: unknown field (known here: kind, at, for, every, target, screenOf, rateKbit, lossPercent)"
            ),
            (
                "\"within\": 30", "\"within\": 50",
                "x.json: expect[0].within: 70 s is past the scenario's end (60 s): it could not be judged"
            ),
            ("\"fault\": 0", "\"fault\": 3", "x.json: expect[0].fault: names fault 3, but the faults are 0 to 0"),
            (
                "\"viewer\": \"bea\", \"fault\"", "\"viewer\": \"cy\", \"fault\"",
                "x.json: expect[0].viewer: 'cy' is not a viewer (bea)"
            ),
            (
                "\"viewer\": \"bea\", \"fault\": 0, \"within\": 30", "\"fault\": 0, \"within\": 30",
                "x.json: expect[0]: a viewRestored expectation needs \"viewer\""
            ),
            (
                "\"kind\": \"viewRestored\", \"viewer\": \"bea\", \"fault\": 0, \"within\": 30",
                "\"kind\": \"watchdogReaches\", \"rung\": \"panic\"",
                "x.json: expect[0].rung: 'panic' is not one of: restartCapture, keyframe, freshEncoder, newTransceiver, keyframes, rebuild, shareAgain, giveUp"
            ),
            (
                "\"expect\": [{ \"kind\": \"viewRestored\", \"viewer\": \"bea\", \"fault\": 0, \"within\": 30 }]",
                "\"expect\": []",
                "x.json: expect: a scenario needs at least one expectation"
            ),
            ("\"server\": true, ", "", "x.json: start.server: viewers meet the sharer in a room: set \"server\": true"),
            ("{ \"name\": \"bea\" }", "{ \"name\": \"ana\" }", "x.json: start.viewers: the name 'ana' is used twice"),
            (
                "{ \"name\": \"bea\" }", "{ \"name\": \"bea\", \"kind\": \"browser\" }",
                "x.json: start.viewers[0].kind: a browser viewer needs \"browser\": true under start"
            ),
            (
                "{ \"name\": \"ana\" }", "{ \"name\": \"ana\", \"size\": \"huge\" }",
                "x.json: start.sharers[0].size: 'huge' is not WIDTHxHEIGHT between 96x60 and 7680x4320"
            ),
            (
                "{ \"name\": \"ana\" }", "{ \"name\": \"ana\", \"policy\": \"fast\" }",
                "x.json: start.sharers[0].policy: 'fast' is not one of: balanced, detail, motion"
            ),
            ("\"name\": \"x\"", "\"name\": \"y\"", "x.json: name: 'y' differs from the file's name 'x'"),
            (
                "\"duration\": 60", "\"duration\": \"$length\"",
                "x.json: duration: '$length' names no parameter (declare it under \"parameters\")"
            ),
            (
                "\"sharers\": [{ \"name\": \"ana\" }]", "\"sharers\": []",
                "x.json: start.sharers: at least one sharer is needed"
            ),
            ("\"summary\": \"s\", ", "", "x.json: summary: missing"),
            (
                "{ \"name\": \"ana\" }", "{ \"name\": \"ana\", \"kind\": \"browser\" }",
                "x.json: start.sharers[0].kind: a browser sharer needs \"browser\": true under start"
            ),
            (
                "\"server\": true, \"sharers\": [{ \"name\": \"ana\" }]",
                "\"server\": true, \"browser\": true, \"sharers\": [{ \"name\": \"ana\", \"kind\": \"browser\", \"codec\": \"vp8\" }]",
                "x.json: start.sharers[0].codec: a browser sharer shares Chromium's fake screen: its source, size, rate, codec, policy and camera are Chromium's own (give only name and kind)"
            ),
            (
                "{ \"name\": \"ana\" }", "{ \"name\": \"ana\", \"kind\": \"robot\" }",
                "x.json: start.sharers[0].kind: 'robot' is not one of: sharectl, browser"
            )
        ]
        for (old, new, message) in cases {
            #expect(error(replacing: old, with: new) == message)
        }
    }

    @Test func aBrowserSharerTakesNoFaultOfASharectlSharer() {
        let text = Self.minimal.replacingOccurrences(
            of: "\"server\": true, \"sharers\": [{ \"name\": \"ana\" }]",
            with: "\"server\": true, \"browser\": true, \"sharers\": [{ \"name\": \"ana\", \"kind\": \"browser\" }]"
        )
        #expect(throws: Never.self) { try parse(text) }
        let stalled = text.replacingOccurrences(
            of: "\"kind\": \"decoderWedge\", \"at\": 20, \"target\": \"bea\"",
            with: "\"kind\": \"captureStall\", \"at\": 20, \"target\": \"ana\"")
        do {
            _ = try parse(stalled)
            Issue.record("a capture stall on a browser sharer was taken")
        } catch {
            #expect(
                "\(error)"
                    == "x.json: faults[0].target: ana is a browser sharer: a captureStall is put into a sharectl sharer only"
            )
        }
    }

    /// A sharer shares from shared layer encoders unless `"simulcast": false` (an encoder per
    /// viewer); anything but true or false is refused.
    @Test func aSharerMayShareFromSharedLayers() throws {
        #expect(try parse(Self.minimal).start.sharers[0].simulcast == true)
        let own = Self.minimal.replacingOccurrences(
            of: "\"sharers\": [{ \"name\": \"ana\" }]",
            with: "\"sharers\": [{ \"name\": \"ana\", \"simulcast\": false }]")
        #expect(try parse(own).start.sharers[0].simulcast == false)
        #expect(
            error(
                replacing: "\"sharers\": [{ \"name\": \"ana\" }]",
                with: "\"sharers\": [{ \"name\": \"ana\", \"simulcast\": \"yes\" }]")
                == "x.json: start.sharers[0].simulcast: should be true or false")
        let scenario = try ScenarioParser.load(path: Self.scenarios.appendingPathComponent("wedge-shared.json").path)
        #expect(scenario.start.sharers[0].simulcast && scenario.start.viewers.count == 2)
    }

    @Test func notJSONAtAllSaysSo() {
        #expect(throws: ScenarioError.self) { try parse("{ \"name\": ") }
        do { _ = try parse("[]") } catch { #expect("\(error)" == "x.json: should be an object {…}") }
        do { _ = try parse("{ \"name\": ") } catch { #expect("\(error)".hasPrefix("x.json: not JSON (")) }
    }
}
