import ScreenWatchdog
import ShareTooling

/// `sharectl scenario check FILE...`: reads each fault scenario file and says whether it is
/// right, what it starts, puts in and expects, or what is wrong and where. `scenario run` is
/// `ScenarioRunCommand`.
enum ScenarioCommand {
    struct Failed: Error, CustomStringConvertible {
        var count: Int
        var description: String { "scenario: \(count) file\(count == 1 ? "" : "s") with problems" }
    }

    static func run(_ arguments: Arguments) async throws {
        if arguments.positional.first == "run" { return try await ScenarioRunCommand.run(arguments) }
        guard arguments.positional.first == "check", arguments.positional.count >= 2 else {
            throw Arguments.UsageError(
                description: "usage: sharectl scenario check FILE... (e.g. sharectl scenario check Scenarios/*.json), "
                    + "or sharectl scenario run FILE [--out DIR] [--param NAME=VALUE]")
        }
        var failed = 0
        for path in arguments.positional.dropFirst() {
            do {
                let scenario = try ScenarioParser.load(path: path)
                say("ok \(path): \(summary(scenario))")
            } catch let error as ScenarioError {
                failed += 1
                say("FAIL \(error)")
            }
        }
        if failed > 0 { throw Failed(count: failed) }
    }

    static func summary(_ scenario: Scenario) -> String {
        let people =
            scenario.start.sharers.map {
                "\($0.name) shares (\($0.source), \($0.codec), \($0.policy)\($0.simulcast ? "" : ", an encoder per viewer"))"
            }
            + scenario.start.viewers.map { "\($0.name) watches (\($0.kind))" }
        let faults = scenario.faults.map { fault in
            "\(fault.kind.rawValue) on \(fault.target) at \(Scenario.Expectation.number(fault.at)) s"
                + (fault.every.map { " every \(Scenario.Expectation.number($0)) s" } ?? "")
        }
        let parameters = scenario.parameters.sorted { $0.key < $1.key }
            .map { "$\($0.key)=\(Scenario.Expectation.number($0.value.value))" }
        var text = "\(Scenario.Expectation.number(scenario.duration)) s; \(people.joined(separator: ", "))"
        if !parameters.isEmpty { text += "; parameters \(parameters.joined(separator: ", "))" }
        if !faults.isEmpty { text += "; faults: \(faults.joined(separator: ", "))" }
        text += "; expects: " + scenario.expect.map { $0.describe(in: scenario) }.joined(separator: "; ")
        return text
    }
}
