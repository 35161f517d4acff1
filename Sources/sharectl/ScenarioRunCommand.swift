import Foundation
import ScreenWatchdog
import ShareCore
import ShareTooling

/// `sharectl scenario run Scenarios/NAME.json [--out DIR] [--param NAME=VALUE]...`: carries out a
/// fault scenario on this machine (room server, sharers, built-in viewers, headless Chromium),
/// prints its timeline and each expectation met or failed with its figure, and exits non-zero
/// when one failed. A scenario that shapes the link runs in a network namespace of its own
/// (root only): the command starts itself again under `unshare -n`.
enum ScenarioRunCommand {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Set in the namespace the command entered itself (the gates' own namespace counts too).
    static let namespaceVariable = "SHARECTL_SCENARIO_NETNS"

    static func run(_ arguments: Arguments) async throws {
        guard arguments.positional.count == 2 else {
            throw Arguments.UsageError(
                description: "usage: sharectl scenario run Scenarios/NAME.json [--out DIR] [--param NAME=VALUE]")
        }
        let path = arguments.positional[1]
        let parameters = try parameterValues()
        let scenario: Scenario
        do {
            scenario = try ScenarioParser.load(path: path, parameters: parameters)
        } catch let error as ScenarioError {
            throw Arguments.UsageError(description: "\(error)")
        }
        let environment = ProcessInfo.processInfo.environment
        let inNamespace = environment[namespaceVariable] == "1" || environment["SHARECTL_IN_NETNS"] == "1"
        let shapesLink = scenario.faults.contains { $0.kind == .link }
        if shapesLink, !inNamespace {
            guard geteuid() == 0 else {
                throw Failed(
                    description: "scenario \(scenario.name) shapes the link (tc, nftables), which needs root: "
                        + "run it as root (it then runs in a network namespace of its own, only loopback)")
            }
            enterNamespace()
        }

        if let problem = loopbackProblem() {
            throw Failed(description: "scenario \(scenario.name) cannot run here: \(problem)")
        }

        let directory =
            arguments.value("out") ?? NSTemporaryDirectory() + "sharectl-scenario-\(scenario.name)-\(getpid())"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw Arguments.UsageError(description: "cannot make the run directory \(directory): \(error)")
        }
        let parameterText = scenario.parameters.sorted { $0.key < $1.key }
            .map { " \($0.key)=\(Scenario.Expectation.number($0.value.value))" }.joined()
        say(
            "Scenario \(scenario.name) (\(Scenario.Expectation.number(scenario.duration)) s\(parameterText.isEmpty ? "" : ";" + parameterText)): \(scenario.summary)"
        )
        say("Run directory: \(directory) (each process's log and --stats-json, timeline.txt)")

        var setup = ScenarioRunner.Setup(
            executable: executablePath(), directory: directory, mayShapeLink: inNamespace || shapesLink)
        if let sfu = arguments.value("sfu") {
            guard sfu == "mesh" || sfu == "janus" else {
                throw Arguments.UsageError(description: "--sfu wants mesh or janus, not '\(sfu)'")
            }
            setup.sfu = sfu
        }
        setup.janusInterface = arguments.value("janus-interface")
        let chosen = setup
        signal(SIGPIPE, SIG_IGN)
        let outcome = await onThread {
            let stop = StopSignal()
            let runner = ScenarioRunner(scenario: scenario, setup: chosen, stopRequested: { stop.requested })
            return runner.run()
        }

        var lines: [String] = []
        for verdict in outcome.verdicts {
            let expectation = scenario.expect[verdict.index]
            lines.append(
                "\(verdict.met ? "met   " : "FAILED") \(expectation.describe(in: scenario)): \(verdict.figure)")
        }
        let heading =
            outcome.interrupted ? "Expectations (interrupted: judged on what was seen so far):" : "Expectations:"
        if !lines.isEmpty { say(heading); for line in lines { say("  " + line) } }
        try? (outcome.timeline + (lines.isEmpty ? "" : heading + "\n" + lines.map { "  " + $0 + "\n" }.joined()))
            .write(toFile: "\(directory)/timeline.txt", atomically: true, encoding: .utf8)
        if let problem = outcome.problem {
            throw Failed(description: "scenario \(scenario.name) could not run: \(problem)")
        }
        if outcome.interrupted { throw Failed(description: "scenario \(scenario.name) was interrupted before its end") }
        let failed = outcome.verdicts.filter { !$0.met }.count
        if failed > 0 {
            throw Failed(
                description: "scenario \(scenario.name): \(failed) of \(outcome.verdicts.count) expectations failed")
        }
        say("Scenario \(scenario.name): all \(outcome.verdicts.count) expectations met.")
    }

    /// `--param NAME=VALUE`, as often as needed (or several in one, comma-separated).
    static func parameterValues() throws -> [String: Double] {
        var values: [String: Double] = [:]
        var words = CommandLine.arguments.dropFirst()[...]
        while let word = words.popFirst() {
            let given: String?
            if word == "--param" {
                given = words.popFirst()
            } else if word.hasPrefix("--param=") {
                given = String(word.dropFirst(8))
            } else {
                continue
            }
            guard let given else { throw Arguments.UsageError(description: "--param needs NAME=VALUE") }
            for item in given.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, let value = Double(parts[1]), value.isFinite else {
                    throw Arguments.UsageError(description: "--param wants NAME=VALUE with a number, not '\(item)'")
                }
                values[parts[0]] = value
            }
        }
        return values
    }

    /// Everything a scenario starts talks over 127.0.0.1; in a network namespace whose loopback is
    /// down nothing could connect (and the runner could not even follow its processes), so say so
    /// before starting any. Nil when a UDP socket can reach 127.0.0.1.
    static func loopbackProblem() -> String? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return "no UDP socket (errno \(errno))" }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(9).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result != 0 else { return nil }
        let reason = String(cString: strerror(errno))
        return
            "127.0.0.1 is unreachable (\(reason)): the loopback interface is down in this network namespace; bring it up with `ip link set lo up`"
    }

    /// This sharectl binary, for the processes the scenario starts.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Starts this command again in a network namespace of its own with loopback up
    /// (`unshare -n sh -c 'ip link set lo up && exec env SHARECTL_SCENARIO_NETNS=1 sharectl …'`);
    /// does not come back unless exec fails.
    static func enterNamespace() {
        let script = "ip link set lo up && exec env \(namespaceVariable)=1 \"$0\" \"$@\""
        let words = ["unshare", "-n", "sh", "-c", script, executablePath()] + CommandLine.arguments.dropFirst()
        var pointers = words.map { strdup($0) } + [nil]
        execvp("unshare", &pointers)
        StandardError.write("sharectl: could not enter a network namespace (unshare -n): errno \(errno)\n")
        exit(1)
    }

    /// Runs blocking work on a thread of its own and waits for it without holding a pool thread.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.name = "scenario-runner"
            thread.start()
        }
    }
}
