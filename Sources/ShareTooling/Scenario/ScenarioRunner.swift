import Foundation
import ShareCore
import ScreenWatchdog
import StatsLine

/// Carries out one scenario on a thread of its own: starts the room server, sharers, viewers and
/// the browser it names, puts its faults in at their times (commands on the processes' standard
/// input, signals, synthetic camera scripts, tc and nftables), follows their `--stats-json`
/// files and output, prints a timeline, stops everything and judges the expectations. Confined
/// to the thread that calls `run()`.
package final class ScenarioRunner {
    package struct Setup: Sendable {
        var executable: String
        var directory: String
        var chromium = "chromium"
        /// Shape the link (tc, nft) on `lo`: only inside a network namespace of our own.
        var mayShapeLink = false
        /// `janus`: the room runs on Janus whatever the file says (`scenario run --sfu janus`);
        /// nil: as the file says.
        package var sfu: String?
        /// The interface Janus and the participants gather on (Janus ignores loopback).
        package var janusInterface: String?

        package init(executable: String, directory: String, chromium: String = "chromium", mayShapeLink: Bool = false) {
            self.executable = executable
            self.directory = directory
            self.chromium = chromium
            self.mayShapeLink = mayShapeLink
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let scenario: Scenario
    let setup: Setup
    /// True once the user asked to stop (SIGINT or SIGTERM).
    private let stopRequested: () -> Bool
    private let started = ContinuousClock.now
    private var processes: [ScenarioProcess] = []
    private var stats: [(name: String, role: Role, follower: StatsFollower)] = []
    private var byName: [String: ScenarioProcess] = [:]
    private var record = ScenarioRecord()
    private var timeline: [String] = []
    private var shownSteps: [String: Set<Int>] = [:]
    private var shownNotices: [String: Set<String>] = [:]
    private var viewState: [String: Bool] = [:]
    private var linkShaped = false
    private var browserStartedAt: Double?
    private var browserSharers: Set<String> = []
    /// Room ids → names, as the built-in participants' stats lines give them.
    private var participantNames: [String: String] = [:]

    enum Role { case sharer, viewer }

    package init(scenario: Scenario, setup: Setup, stopRequested: @escaping () -> Bool) {
        var scenario = scenario
        if let sfu = setup.sfu { scenario.start.sfu = sfu }
        self.scenario = scenario
        self.setup = setup
        self.stopRequested = stopRequested
    }

    var now: Double { (ContinuousClock.now - started).inSeconds }

    package struct Outcome: Sendable {
        package var verdicts: [ScenarioVerdict]
        package var interrupted: Bool
        /// Why it could not run, if it could not.
        package var problem: String?
        /// The timeline as printed.
        package var timeline: String
    }

    /// Runs the scenario to its end (or a signal) and judges it. Always stops what it started.
    package func run() -> Outcome {
        var problem: String?
        var interrupted = false
        do {
            try startEverything()
            interrupted = try follow()
        } catch {
            problem = "\(error)"
            event("the run stopped: \(error)")
        }
        stopEverything()
        collect()
        record.end = now
        let verdicts = problem == nil ? ScenarioJudge.judge(scenario, record) : []
        return Outcome(verdicts: verdicts, interrupted: interrupted, problem: problem, timeline: timelineText)
    }

    // MARK: Starting

    private func startEverything() throws {
        var invite: String?
        // A browser viewer is judged by what it reports to a sharectl sharer's mesh connection,
        // which a room on Janus does not have.
        if onJanus, scenario.start.viewers.contains(where: { $0.kind != "builtin" }) {
            throw Failure(
                description: "a scenario on Janus takes built-in viewers only (a browser can be its sharer)")
        }
        if scenario.start.server {
            let port = try Self.freePort()
            var arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--room", scenario.name]
            if onJanus {
                arguments += ["--sfu", "janus"]
                if let interface = setup.janusInterface { arguments += ["--janus-interface", interface] }
            }
            let server = try launch("server", setup.executable, arguments, stats: nil)
            invite = try waitForInvite(server)
            event(
                "room server on port \(port)\(onJanus ? ", its media on a Janus of its own" : ""): \(redactedURL(invite!))"
            )
        }
        guard let invite else { throw Failure(description: "a scenario without \"server\": true has nowhere to meet") }
        for sharer in scenario.start.sharers where sharer.kind == "browser" {
            // The browser client shares Chromium's fake screen once joined (`share=1`).
            try startBrowser(sharer.name, invite: invite, extra: "&share=1")
            browserSharers.insert(sharer.name)
        }
        for sharer in scenario.start.sharers where sharer.kind != "browser" {
            guard sharer.source == "synthetic" || sharer.source == "portal" else {
                throw Failure(
                    description:
                        "\(sharer.name): a room share takes the synthetic screen or the portal's, not '\(sharer.source)'"
                )
            }
            guard sharer.fps <= 30 else {
                throw Failure(description: "\(sharer.name): a room share goes up to 30 fps, not \(sharer.fps)")
            }
            // The sharer's source (synthetic, or the real screen: portal with its saved grant) and
            // its send policy go to `share --room` as they are.
            var arguments = [
                "share", "--name", sharer.name, "--size", "\(sharer.width)x\(sharer.height)",
                "--fps", "\(sharer.fps)", "--codec", sharer.codec, "--audio", "none", "--policy", sharer.policy,
                "--source", sharer.source
            ]
            if sharer.source.hasPrefix("portal") { arguments.append("--unattended") }
            arguments += iceArguments
            if !sharer.simulcast { arguments.append("--no-simulcast") }
            if let camera = cameraArgument(for: sharer) { arguments += ["--camera", camera] }
            _ = try launch(sharer.name, setup.executable, arguments, room: invite, stats: .sharer)
        }
        for viewer in scenario.start.viewers {
            switch viewer.kind {
            case "builtin":
                _ = try launch(
                    viewer.name, setup.executable, ["watch", "--name", viewer.name] + iceArguments, room: invite,
                    stats: .viewer)
            default:
                try startBrowser(viewer.name, invite: invite)
            }
        }
    }

    private var onJanus: Bool { scenario.start.sfu == "janus" }

    /// On Janus: the participants offer candidates where Janus gathers too.
    private var iceArguments: [String] {
        guard onJanus, let interface = setup.janusInterface else { return [] }
        return ["--ice-interface", interface]
    }

    /// `room`, the invite link with its token, goes to the child as SHARECTL_ROOM_URL: not on its
    /// command line, where `ps` and the process's log would show it.
    private func launch(
        _ name: String, _ executable: String, _ arguments: [String], room: String? = nil,
        stats role: Role?
    ) throws -> ScenarioProcess {
        var arguments = arguments
        if let role {
            let path = "\(setup.directory)/\(name).jsonl"
            // A file left from an earlier run in the same directory must not be read as this one's.
            try? FileManager.default.removeItem(atPath: path)
            arguments += ["--stats-json", path]
            stats.append((name, role, StatsFollower(path: path)))
        }
        let started = self.started
        let process = ScenarioProcess(
            name: name, executable: executable, arguments: arguments,
            environment: room.map { ["SHARECTL_ROOM_URL": $0] } ?? [:], log: "\(setup.directory)/\(name).log",
            clock: { (ContinuousClock.now - started).inSeconds })
        do {
            try process.start()
        } catch {
            throw Failure(description: "could not start \(name) (\(executable)): \(error)")
        }
        processes.append(process)
        byName[name] = process
        event(
            "started \(name): \(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.first ?? "") (pid \(process.pid))"
        )
        return process
    }

    private func waitForInvite(_ server: ScenarioProcess) throws -> String {
        let deadline = now + 20
        while now < deadline {
            for line in server.takeLines() {
                record.lines["server", default: []].append(line)
                if line.text.hasPrefix("Room: ") { return String(line.text.dropFirst(6)) }
            }
            if let status = server.exitStatus {
                throw Failure(
                    description:
                        "the room server exited (status \(status)) before saying its link; see \(setup.directory)/server.log"
                )
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Failure(description: "the room server printed no 'Room: URL' line within 20 s")
    }

    /// `synthetic:NAME?die=T,back=T` or `?stall=T+D` from the scenario's camera faults, in the
    /// share's own time (it starts now). A room share's camera is a scripted synthetic one for
    /// `synthetic` and `vivid` alike (a vivid camera lives in a QEMU guest, out of the room's reach).
    private func cameraArgument(for sharer: Scenario.Sharer) -> String? {
        guard sharer.camera != nil else { return nil }
        var script: [String] = []
        let offset = now
        for fault in scenario.faults where fault.target == sharer.name {
            for at in fault.times(until: scenario.duration) {
                let t = ScenarioJudge.tenths(max(0, at - offset))
                switch fault.kind {
                case .cameraUnplug:
                    script.append("die=\(t)")
                    if let lasting = fault.duration {
                        script.append("back=\(ScenarioJudge.tenths(max(0, at + lasting - offset)))")
                    }
                case .cameraSilent:
                    script.append("stall=\(t)" + (fault.duration.map { "+\(ScenarioJudge.tenths($0))" } ?? ""))
                default: break
                }
            }
        }
        return "synthetic:\(sharer.name)-camera" + (script.isEmpty ? "" : "?" + script.joined(separator: ","))
    }

    /// A browser participant. Its console goes to its log (`--enable-logging=stderr`): a browser
    /// sharer's watchdog speaks there ("sharectl-watchdog {JSON}", read by `readBrowserLine`).
    private func startBrowser(_ name: String, invite: String, extra: String = "") throws {
        // Faults for the browser go in its page address: `fault=KIND@SECONDS`, counted from
        // `faultClock` (this moment, in wall-clock milliseconds), not from the page's own start:
        // Chromium takes seconds to load the page on a busy machine (5.3 s in one run), and a
        // fault counted from there came that much later than the time it is judged from.
        var query = "&name=\(name)&faultClock=\(Int64(Date().timeIntervalSince1970 * 1000))" + extra
        for (index, fault) in scenario.faults.enumerated() where fault.target == name {
            let word: String
            switch fault.kind {
            case .decoderWedge: word = "decoder-wedge"
            case .decoderWedgeSticky: word = "decoder-wedge-sticky"
            default: continue
            }
            let after = max(0, fault.at - now)
            query += "&fault=\(word)@\(ScenarioJudge.tenths(after))"
            record.injections.append(ScenarioRecord.Injection(fault: index, t: fault.at))
        }
        let profile = "\(setup.directory)/\(name).profile"
        try? FileManager.default.removeItem(atPath: profile)
        browserStartedAt = now
        _ = try launch(
            name, "/usr/bin/env",
            [
                setup.chromium, "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu", "--mute-audio",
                "--enable-logging=stderr", "--v=0",
                "--user-data-dir=\(profile)", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                "--autoplay-policy=no-user-gesture-required", "--allow-loopback-in-peer-connection",
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding", invite + query
            ],
            stats: nil)
    }

    // MARK: Following

    private enum Action {
        case inject(Int)
        case clear(Int)
        case reshareAgain(Int)
    }

    /// Puts the faults in at their times and follows everything until the end. True if a
    /// signal ended it early.
    private func follow() throws -> Bool {
        var schedule: [(t: Double, action: Action)] = []
        for (index, fault) in scenario.faults.enumerated() {
            for at in fault.times(until: scenario.duration) {
                schedule.append((at, .inject(index)))
                if fault.kind == .reshare { schedule.append((at + 3, .reshareAgain(index))) }
                if let lasting = fault.duration { schedule.append((at + lasting, .clear(index))) }
            }
        }
        schedule.sort { $0.t < $1.t }
        var exited = Set<String>()
        var judgedAt = 0.0, lastAction = 0.0
        while now < scenario.duration {
            if stopRequested() {
                event("interrupted (signal): stopping")
                return true
            }
            while let next = schedule.first, next.t <= now {
                schedule.removeFirst()
                try carryOut(next.action)
                lastAction = now
            }
            collect()
            for process in processes where !exited.contains(process.name) {
                if let status = process.exitStatus {
                    exited.insert(process.name)
                    event("\(process.name) exited (status \(status)) — see \(setup.directory)/\(process.name).log")
                }
            }
            // Every fault in and every expectation met: the run ends when all are of the kinds
            // that, once met, stay met (the rest of its time could change no verdict), or when the
            // only others are "the watchdog stays below" and each watchdog has rested for
            // `quietToEnd` (a new climb starts with a step, and one is taken within seconds of a
            // relapse).
            if schedule.isEmpty, now - judgedAt >= 1 {
                judgedAt = now
                record.end = now
                let quiet = ScenarioJudge.quietEnough(scenario, record, lastAction: lastAction, now: now)
                if endsWhenMet || quiet, ScenarioJudge.judge(scenario, record).allSatisfy(\.met) {
                    let why = endsWhenMet ? "" : ", and the watchdog has rested \(Int(ScenarioJudge.quietToEnd)) s"
                    event(
                        "every expectation is met\(why); the run ends here (of \(ScenarioJudge.tenths(scenario.duration)) s)"
                    )
                    return false
                }
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        return false
    }

    /// Whether the run may end once every expectation is met: none of them is about the whole run
    /// (staying below a rung, a frame rate, a size, stalls, a camera's recovery).
    private var endsWhenMet: Bool {
        scenario.expect.allSatisfy { ScenarioJudge.metOnceStaysMet.contains($0.kind) }
    }

    private func carryOut(_ action: Action) throws {
        switch action {
        case .inject(let index):
            let fault = scenario.faults[index]
            let what = "fault \(index) \(fault.kind.rawValue) on \(fault.target)"
            switch fault.kind {
            case .captureStall, .encoderStall:
                let command = fault.kind == .captureStall ? "fault capture-stall" : "fault encoder-stall"
                inject(index, what, command: command, to: fault.target)
            case .decoderWedge, .decoderWedgeSticky:
                guard isBuiltin(fault.target) else {
                    event("\(what): in \(fault.target)'s page address since its start")
                    return
                }
                let word = fault.kind == .decoderWedge ? "decoder-wedge" : "decoder-wedge-sticky"
                inject(index, what, command: "fault \(word) \(fault.screenOf ?? "")", to: fault.target)
            case .reshare:
                record.injections.append(ScenarioRecord.Injection(fault: index, t: now))
                byName[fault.target]?.signal(SIGUSR1)
                event("\(what): SIGUSR1 (stop sharing; again in 3 s)")
            case .cameraUnplug, .cameraSilent:
                // The camera's own script acts at the scheduled time (its clock started with the
                // sharer, at the run's start); the runner only notes it, a moment later or earlier.
                record.injections.append(ScenarioRecord.Injection(fault: index, t: min(now, fault.at)))
                event("\(what): by the synthetic camera's script given at start")
            case .link:
                try shapeLink(fault)
                record.injections.append(ScenarioRecord.Injection(fault: index, t: now))
                event("\(what): \(linkWords(fault)) on lo (every participant's packets: they share one loopback)")
            }
        case .reshareAgain(let index):
            byName[scenario.faults[index].target]?.signal(SIGUSR1)
            event("\(scenario.faults[index].target) shares again (SIGUSR1)")
        case .clear(let index):
            let fault = scenario.faults[index]
            switch fault.kind {
            case .decoderWedge, .decoderWedgeSticky:
                if isBuiltin(fault.target) {
                    byName[fault.target]?.send("fault clear")
                    event("fault \(index) ends: 'fault clear' to \(fault.target)")
                } else {
                    event(
                        "fault \(index) would end now, but a browser's fault from its page address lasts until a rebuild"
                    )
                }
            case .link:
                unshapeLink()
                event("fault \(index) ends: the link is free again")
            default:
                event("fault \(index) \(fault.kind.rawValue) ends")
            }
        }
    }

    private func inject(_ index: Int, _ what: String, command: String, to target: String) {
        record.injections.append(ScenarioRecord.Injection(fault: index, t: now))
        let sent = byName[target]?.send(command) ?? false
        event("\(what): '\(command)' to its standard input\(sent ? "" : " — could not be written (has it exited?)")")
    }

    private func isBuiltin(_ name: String) -> Bool {
        scenario.start.viewers.contains { $0.name == name && $0.kind == "builtin" }
    }

    // MARK: The link

    private func linkWords(_ fault: Scenario.Fault) -> String {
        [
            fault.rateKbit.map { "\($0) kbit/s (tc tbf)" },
            fault.lossPercent.map { "\(ScenarioJudge.tenths($0))% loss (nftables)" }
        ]
        .compactMap { $0 }.joined(separator: ", ")
    }

    private func shapeLink(_ fault: Scenario.Fault) throws {
        guard setup.mayShapeLink else {
            throw Failure(
                description: "a link fault needs a network namespace of its own (run as root: the runner enters one)")
        }
        linkShaped = true
        if let rate = fault.rateKbit {
            try Self.command([
                "tc", "qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "\(rate)kbit", "burst", "32kbit",
                "latency", "50ms"
            ])
        }
        if let loss = fault.lossPercent {
            try Self.command(["nft", "add", "table", "inet", "sharectl_scenario"])
            // On the way in: the sender's sendmsg succeeds and the datagram vanishes, as on a lossy
            // path (dropped on the way out, the sender would see EPERM instead).
            try Self.command([
                "nft", "add", "chain", "inet", "sharectl_scenario", "in",
                "{ type filter hook input priority 0; }"
            ])
            try Self.command([
                "nft", "add", "rule", "inet", "sharectl_scenario", "in", "meta", "l4proto", "udp", "numgen",
                "random", "mod", "100", "<", "\(Int(loss.rounded()))", "drop"
            ])
        }
    }

    private func unshapeLink() {
        guard linkShaped else { return }
        linkShaped = false
        _ = try? Self.command(["tc", "qdisc", "del", "dev", "lo", "root"], quiet: true)
        _ = try? Self.command(["nft", "delete", "table", "inet", "sharectl_scenario"], quiet: true)
    }

    /// Runs a short command (tc, nft) to its end: spawned and waited for directly, its errors
    /// read from a file, so it depends on nothing but the kernel.
    static func command(_ words: [String], quiet: Bool = false) throws {
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sharectl-scenario-\(getpid())-\(words[0]).err"
        ).path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var arguments = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, words[0], &actions, nil, &arguments, environ)
        guard spawned == 0 else {
            throw Failure(description: "could not run \(words[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: errors)
        let exited = status & 0x7f == 0 && (status >> 8) & 0xff == 0
        if !exited, !quiet {
            throw Failure(
                description:
                    "\(words.joined(separator: " ")) failed: \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    // MARK: Reading what happens

    /// Takes the new output lines and stats lines of everyone into the record and the timeline.
    private func collect() {
        for process in processes {
            for line in process.takeLines() {
                record.lines[process.name, default: []].append(line)
                if line.text.hasPrefix("Notice: ") {
                    notice(line.text.dropFirst(8).description, by: process.name, at: line.t)
                }
                // The camera director's steps, as a share prints them.
                if line.text.hasPrefix("Camera: ") { event("\(process.name): \(line.text)", at: line.t) }
                if browserSharers.contains(process.name) { readBrowserLine(process.name, line) }
            }
        }
        let t = now
        for (name, role, follower) in stats {
            let unreadBefore = follower.unread
            switch (role, onJanus) {
            case (.viewer, false):
                for line in follower.newLines(as: CallStatsLine.self) { readViewer(name, line, t: t) }
            case (.sharer, false):
                for line in follower.newLines(as: CallStatsLine.self) { readSharer(name, line, t: t) }
            case (.viewer, true):
                for line in follower.newLines(as: JanusWatchStatsLine.self) {
                    // A watch in a room on Janus follows the one publisher it subscribed to.
                    let sample = ScenarioRecord.ViewSample(
                        t: t, framesDecoded: line.video.framesDecoded, width: line.video.width,
                        height: line.video.height)
                    addScreen(viewer: name, sharer: Self.person(ofFeed: line.publisher), sample)
                }
            case (.sharer, true):
                for line in follower.newLines(as: ShareStatsLine.self) {
                    if let watchdog = line.watchdog { readWatchdog(name, watchdog, names: participantNames, t: t) }
                }
            }
            if unreadBefore == 0, follower.unread > 0 {
                event(
                    "\(name): a --stats-json line that is not a call line was passed over (\(follower.firstUnread ?? "?"))",
                    at: t)
            }
        }
    }

    /// The person a Janus feed's display names: a browser publishes its screen as "NAME (screen)".
    static func person(ofFeed display: String) -> String {
        display.hasSuffix(" (screen)") ? String(display.dropLast(" (screen)".count)) : display
    }

    private func readViewer(_ viewer: String, _ line: CallStatsLine, t: Double) {
        for peer in line.peers {
            participantNames[peer.id] = peer.name
            let screen = peer.screen
            let sample = ScenarioRecord.ViewSample(
                t: t, framesDecoded: screen?.framesDecoded,
                width: screen?.width ?? 0, height: screen?.height ?? 0)
            addScreen(viewer: viewer, sharer: peer.name, sample)
            // The first built-in viewer's view of a sharer's camera stands for that camera.
            if scenario.start.sharers.contains(where: { $0.name == peer.name }),
                viewer == scenario.start.viewers.first(where: { $0.kind == "builtin" })?.name
            {
                let camera = peer.camera
                addCamera(
                    peer.name,
                    ScenarioRecord.ViewSample(
                        t: t, framesDecoded: camera?.framesDecoded,
                        width: camera?.width ?? 0, height: camera?.height ?? 0))
            }
        }
    }

    private func readSharer(_ sharer: String, _ line: CallStatsLine, t: Double) {
        let names = Dictionary(line.peers.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        if let watchdog = line.watchdog { readWatchdog(sharer, watchdog, names: names, t: t) }
        // A browser viewer is seen through what it reports to the sharer.
        for peer in line.peers
        where scenario.start.viewers.contains(where: { $0.name == peer.name && $0.kind == "browser" }) {
            let frames = peer.report?.framesDecoded ?? peer.theirView?.screenFramesDecoded
            addScreen(viewer: peer.name, sharer: sharer, ScenarioRecord.ViewSample(t: t, framesDecoded: frames))
        }
        // With no built-in viewer, the camera is judged by what the sharer sends of it.
        if !scenario.start.viewers.contains(where: { $0.kind == "builtin" }) {
            let sent = line.peers.compactMap { $0.cameraSent?.framesSent }
            addCamera(sharer, ScenarioRecord.ViewSample(t: t, framesDecoded: sent.isEmpty ? nil : sent.reduce(0, +)))
        }
    }

    private func readWatchdog(_ sharer: String, _ watchdog: WatchdogStatus, names: [String: String], t: Double) {
        var steps = watchdog.recent
        if let last = watchdog.lastStep, !steps.contains(where: { $0.number == last.number }) { steps.append(last) }
        record.watchdog[sharer, default: []].append(
            ScenarioRecord.WatchdogSample(t: t, rung: watchdog.rung, steps: steps, notices: watchdog.notices))
        for step in steps where shownSteps[sharer, default: []].insert(step.number).inserted {
            let subject = step.subject.map { id in names[id].map { " \(id) (\($0))" } ?? " \(id)" } ?? ""
            event("\(sharer)'s watchdog, step \(step.number): \(step.action)\(subject) — \(step.reason)", at: t)
        }
        for text in watchdog.notices { notice(text, by: sharer, at: t) }
    }

    /// A browser sharer's watchdog, from Chromium's log of its console:
    /// `[…:INFO:CONSOLE:N] "sharectl-watchdog {JSON}", source: URL (N)`. The ids its steps name are
    /// the room's; the names come from the other participants' stats lines.
    private func readBrowserLine(_ sharer: String, _ line: ScenarioRecord.Line) {
        guard let start = line.text.range(of: "sharectl-watchdog "),
            let end = line.text.range(of: "\", source: ", options: .backwards), end.lowerBound > start.upperBound
        else { return }
        let json = line.text[start.upperBound..<end.lowerBound]
        guard let watchdog = try? JSONDecoder().decode(WatchdogStatus.self, from: Data(json.utf8)) else {
            event(
                "\(sharer): a watchdog line that does not read as one was passed over: \(json.prefix(200))", at: line.t)
            return
        }
        readWatchdog(sharer, watchdog, names: participantNames, t: line.t)
    }

    private func notice(_ text: String, by name: String, at t: Double) {
        guard shownNotices[name, default: []].insert(text).inserted else { return }
        event("\(name) shows: \(text)", at: t)
    }

    private func addScreen(viewer: String, sharer: String, _ sample: ScenarioRecord.ViewSample) {
        let key = "\(viewer)←\(sharer)"
        let previous = record.screens[viewer]?[sharer]?.last
        record.screens[viewer, default: [:]][sharer, default: []].append(sample)
        followMotion(key, "\(viewer): \(sharer)'s screen", previous, sample)
    }

    private func addCamera(_ sharer: String, _ sample: ScenarioRecord.ViewSample) {
        let previous = record.cameras[sharer]?.last
        record.cameras[sharer, default: []].append(sample)
        followMotion("camera \(sharer)", "\(sharer)'s camera", previous, sample)
    }

    /// Says when a view starts, stands still (under 2 fps: a stalled capture still repeats its
    /// last frame once a second) and moves again.
    private func followMotion(
        _ key: String, _ what: String, _ previous: ScenarioRecord.ViewSample?,
        _ sample: ScenarioRecord.ViewSample
    ) {
        guard let previous, let rate = ScenarioJudge.rate(from: previous, to: sample) else { return }
        let moving = rate >= 2
        let size = sample.width > 0 ? " at \(sample.width)×\(sample.height)" : ""
        let figures = sample.framesDecoded.map { "\($0) frames, \(ScenarioJudge.tenths(rate)) fps" } ?? "gone"
        switch (viewState[key], moving) {
        case (nil, true): event("\(what) decodes\(size) (\(figures))", at: sample.t)
        case (true, false): event("\(what) stands still (\(figures))", at: previous.t)
        case (false, true): event("\(what) moves again\(size) (\(figures))", at: sample.t)
        default: break
        }
        if viewState[key] != nil || moving { viewState[key] = moving }
    }

    // MARK: Stopping

    private func stopEverything() {
        // Viewers and the browser first, then sharers, then the server, each given 8 s.
        let order = processes.reversed()
        for process in order where process.running {
            process.stop()
        }
        unshapeLink()
        if !processes.isEmpty { event("stopped everything") }
    }

    // MARK: Saying it

    private func event(_ text: String, at t: Double? = nil) {
        let line = String(format: "%7.1f s  ", t ?? now) + text
        timeline.append(line)
        StandardOutput.write(line + "\n")
    }

    /// The timeline as printed, for `DIR/timeline.txt`.
    var timelineText: String { timeline.joined(separator: "\n") + "\n" }

    static func freePort() throws -> Int {
        switch freeLoopbackPort() {
        case .success(let port): return port
        case .failure(let error): throw Failure(description: "could not find a free port: \(error)")
        }
    }
}

@available(*, unavailable) extension ScenarioRunner: Sendable {}
