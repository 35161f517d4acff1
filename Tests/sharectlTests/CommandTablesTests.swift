import CommandLineOptions
@testable import sharectl
import Testing

@Suite struct CommandTablesTests {
    let table = CommandTables.sharectl

    func parsed(_ line: String) throws -> ParsedArguments {
        let words = line.split(separator: " ").map(String.init)
        guard case .run(let arguments) = try table.parse(words) else { throw UsageError(description: "\(line): help") }
        return arguments
    }

    @Test func theTableIsSound() {
        #expect(table.problems() == [])
    }

    /// The command lines the gates, the scenario runner, the Makefile, the benchmarks and the
    /// README give sharectl, one of each shape.
    @Test(arguments: [
        "version", "snapshot screen.png", "sources --restore-token-file /tmp/t", "demo", "demo --duration 5",
        "serve --listen 127.0.0.1:8080 --room demo --state demo-room.json",
        "serve --listen 127.0.0.1:1 --room gate --grace 15 --state s.json --log-level debug",
        "serve --listen 127.0.0.1:1 --room secure --tls-cert c.pem --tls-key k.pem",
        "serve --listen 127.0.0.1:1 --room r --allow-origin https://a.example --allow-origin https://b.example",
        "share --source synthetic --whip http://127.0.0.1:1/whip --token-file t --codec h264 --duration 60 --stats-json s.jsonl",
        "share --source synthetic --whip http://127.0.0.1:1/whip --codec vp8 --size 1280x720 --fps 30 --duration 8 "
            + "--stats-json s --relay-only --verbose --turn turn:127.0.0.1:3478 --turn-user sharectl --turn-credential relay-secret",
        "share --source synthetic --whip http://127.0.0.1:1/whip --codec h264 --size 1920x1080 --fps 30 --policy balanced "
            + "--duration 170 --stats-json s --reconnect",
        "share --source synthetic --size 1280x720 --fps 15 --camera synthetic:cam --whip http://127.0.0.1:1/whip "
            + "--duration 11 --no-audio --stats-json s",
        "share --source none --camera synthetic:cam --whip http://127.0.0.1:1/whip --duration 7 --no-audio",
        "share --source portal --restore-token-file t --whip http://127.0.0.1:1/whip --codec h264 --duration 10 "
            + "--stats-json s --no-audio --verbose --unattended --policy detail",
        "share --source pipewire:42 --whip http://127.0.0.1:1/whip --no-cursor --encoder x264 --bitrate 2500 "
            + "--stun stun:127.0.0.1:3478 --turn-credential-file c",
        "share --room http://127.0.0.1:1/r/a?t=x --size 320x180 --fps 5 --audio mic --audio-output none --name cy --stats-json s",
        "share --room http://127.0.0.1:1/r/a?t=x --name Ana --size 960x540 --fps 15 --audio none --camera synthetic:cam "
            + "--share-for 7 --duration 14 --stats-json s --snapshot shots",
        "share --room-file demo-room.url --name Ana --camera synthetic --audio synthetic --size 1280x720 --stats-json a.jsonl",
        "share --name Ana --size 1280x720 --fps 15 --codec h264 --audio none --camera synthetic --stats-json a.jsonl",
        "watch http://127.0.0.1:1/r/a?t=x --name Vi --duration 15 --stats-json s",
        "watch http://127.0.0.1:1/r/a?t=x --camera synthetic --audio synthetic --name Cy --stats-json s",
        "watch --name Viewer --snapshot shots/ --audio-output none --codec vp8 --no-audio --room-file r.url",
        "camera list", "camera test --device /dev/video0 --duration 300",
        "camera test --device auto;synthetic:spare --duration 17 --verbose",
        "bench-wire /tmp/work",
        "bench-pipeline f.bgrx --frames 180 --bitrate 2500 --codec h264 --content screen --no-write",
        "diagnose share.jsonl --out DIR", "scenario check Scenarios/wedge.json Scenarios/soak.json",
        "scenario run Scenarios/wedge.json --out DIR --param length=600 --param a=1,b=2", "completion bash"
    ])
    func everyCommandLineInUseStillParses(line: String) throws {
        _ = try parsed(line)
    }

    /// What the commands fall back to when an option is not given, as before the tables.
    @Test func theDefaultsAreTheOnesTheCommandsHad() throws {
        #expect(try parsed("serve").double("grace") == 15)
        #expect(try parsed("serve").valueOrDefault("listen") == "127.0.0.1:8080")
        #expect(try parsed("serve").valueOrDefault("room") == "demo")
        #expect(try parsed("demo").double("duration") == 0)
        #expect(try parsed("demo").valueOrDefault("listen") == "127.0.0.1:0")
        #expect(try parsed("demo").valueOrDefault("camera") == "none")
        #expect(try parsed("share").valueOrDefault("source") == "synthetic")
        #expect(try parsed("share").valueOrDefault("encoder") == "auto")
        #expect(try parsed("share").int("fps") == 30)
        #expect(try parsed("share").double("duration") == 0)
        #expect(try parsed("share").double("share-for") == 0)
        #expect(try parsed("share").valueOrDefault("name") == "sharectl")
        #expect(try parsed("share").valueOrDefault("audio") == "synthetic")
        #expect(try parsed("watch").valueOrDefault("name") == "viewer")
        #expect(try parsed("watch").valueOrDefault("audio") == "none")
        #expect(try parsed("watch").double("duration") == 0)
        #expect(try parsed("camera test").double("duration") == 10)
        #expect(try parsed("snapshot x.png").int("width") == 1920)
        #expect(try parsed("snapshot x.png").int("height") == 1080)
        #expect(try parsed("snapshot x.png").int("frame") == 0)
        #expect(try parsed("bench-pipeline f").int("frames") == 180)
        #expect(try parsed("bench-pipeline f").int("bitrate") == 2500)
        #expect(try parsed("bench-pipeline f").valueOrDefault("content") == "screen")
    }

    @Test func optionsOfAnotherCommandAreRefused() {
        #expect(
            throws: UsageError(description: "--policy is an option of share, not of serve (see: sharectl serve --help)")
        ) {
            try table.parse(["serve", "--policy", "detail"])
        }
        #expect(
            throws: UsageError(description: "--whip is an option of share, not of watch (see: sharectl watch --help)")
        ) {
            try table.parse(["watch", "--whip", "http://x"])
        }
    }

    @Test func configKeysFollowTheTable() {
        let share = CommandTables.configKeys(for: "share") ?? []
        for key in [
            "source", "whip", "token-file", "policy", "reconnect", "unattended", "restore-token-file", "room-file"
        ] {
            #expect(share.contains(key))
        }
        #expect(
            CommandTables.configKeys(for: "serve") == [
                "listen", "room", "grace", "sfu", "janus", "janus-admin-key", "janus-interface", "state",
                "tls-cert", "tls-key", "allow-origin", "verbose", "log-level"
            ])
        #expect(CommandTables.configKeys(for: "version") == [])
        #expect(CommandTables.configKeys(for: "kiosk") == ["system", "user", "root"])
        #expect(CommandTables.configKeys(for: "nothing") == nil)
    }

    @Test func theVersionLineSaysWhereItCameFrom() {
        let hash = String(repeating: "ab", count: 20)
        #expect(
            VersionCommand.headline(commit: hash, modified: false).hasPrefix(
                "sharectl \(VersionCommand.number), commit \(hash) (Swift "))
        #expect(
            VersionCommand.headline(commit: hash, modified: true).contains("commit \(hash) with local changes (Swift "))
        #expect(
            VersionCommand.headline(commit: nil, modified: false).hasPrefix(
                "sharectl \(VersionCommand.number), commit unknown (Swift "))
    }
}
