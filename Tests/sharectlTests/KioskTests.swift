import CallsClient
import CommandLineOptions
import Foundation
import Testing

@testable import sharectl

/// `sharectl kiosk install`: the unit and config file it writes (systemd-analyze verify judges the
/// unit in the kiosk gates), and the health rule its watchdog follows.
@Suite struct KioskTests {
    @Test func aUserUnitRunsTheShareFromItsConfigWithTheTokenAsACredential() throws {
        let unit = try KioskCommand.unit(
            scope: .user(home: "/home/ana"),
            shareWords: [
                "--source", "portal", "--unattended", "--whip", "https://ingest.example/whip", "--token-file",
                "/home/ana/.config/sharectl/token", "--policy", "detail"
            ])
        #expect(unit.unitPath == "/home/ana/.config/systemd/user/sharectl-kiosk.service")
        #expect(unit.configPath == "/home/ana/.config/sharectl/kiosk.conf")
        let text = unit.unit
        for line in [
            "Type=notify", "WatchdogSec=60s", "Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict",
            "PrivateTmp=yes", "StateDirectory=sharectl",
            "LoadCredential=whip-token:/home/ana/.config/sharectl/token", "WantedBy=graphical-session.target"
        ] {
            #expect(text.contains("\n\(line)\n"), "\(line) missing from:\n\(text)")
        }
        #expect(
            text.contains(
                "ExecStart=\(unit.executable) share --config /home/ana/.config/sharectl/kiosk.conf "
                    + "--restore-token-file ${STATE_DIRECTORY}/restore-token"))
        #expect(!text.contains("User="))
        let config = unit.config
        for line in [
            "source = portal", "whip = https://ingest.example/whip", "policy = detail", "unattended = true",
            "reconnect = true"
        ] {
            #expect(config.contains("\n\(line)\n"), "\(line) missing from:\n\(config)")
        }
        #expect(!config.contains("token-file"), "the token is the unit's credential, not an option")

        // The config file reads back as `share --config` reads it.
        let share = try #require(CommandTables.sharectl.command(named: "share"))
        let file = try ConfigFile(text: config, path: "kiosk.conf", command: share, refused: ShareConfig.refused)
        #expect(file.entries.count == 5)
    }

    @Test func aSystemUnitRunsAsTheDesktopUserInTheirSession() throws {
        let unit = try KioskCommand.unit(
            scope: .system(user: "kiosk"), shareWords: ["--whip", "http://10.0.0.2:8080/whip"])
        #expect(unit.unitPath == "/etc/systemd/system/sharectl-kiosk.service")
        #expect(unit.unit.contains("\nUser=kiosk\n"))
        #expect(unit.unit.contains("\nEnvironment=XDG_RUNTIME_DIR=/run/user/%U\n"))
        #expect(unit.unit.contains("\nWantedBy=multi-user.target\n"))
        #expect(!unit.unit.contains("LoadCredential"), "no token file, no credential")
    }

    @Test func whatAKioskCannotTakeIsRefused() {
        for (words, message) in [
            (["--whip", "u", "--token", "secret"], "--token is not for a kiosk"),
            (["--whip", "u", "--duration", "60"], "--duration is not for a kiosk"),
            (["--source", "portal"], "give --whip URL"),
            ([String](), "needs the share's options after --"),
            (["--whip", "u", "--polcy", "detail"], "unknown option --polcy")
        ] {
            #expect {
                _ = try KioskCommand.unit(scope: .user(home: "/h"), shareWords: words)
            } throws: { error in
                "\(error)".contains(message)
            }
        }
    }

    func stats(sent: Int, state: String = "connected", limitedBy: String = "none") -> ShareStats {
        var line = ShareStats()
        line.video.framesSent = sent
        line.video.framesEncoded = sent
        line.connection.state = state
        line.video.limitedBy = limitedBy
        return line
    }

    /// WATCHDOG=1 only while media leaves or the link holds it back; READY once, at the first frame.
    @Test func theWatchdogIsFedOnlyWhileTheShareIsHealthy() {
        var health = ServiceHealth()
        #expect(
            health.observe(stats(sent: 0, state: "connecting")) == (.unhealthy("the connection is connecting"), false))
        #expect(health.observe(stats(sent: 5)) == (.healthy, true))
        #expect(health.observe(stats(sent: 35)) == (.healthy, false))
        #expect(health.observe(stats(sent: 35)) == (.unhealthy("no frame sent in the last second"), false), "stalled")
        #expect(health.observe(stats(sent: 35, limitedBy: "bandwidth")) == (.healthy, false), "held back by the link")
        #expect(health.observe(stats(sent: 36)) == (.healthy, false), "a still screen's repeat counts")
        #expect(health.observe(stats(sent: 36, state: "failed: consent expired")).verdict != .healthy)
        #expect(health.ready)
    }

    /// An encoder that puts out nothing takes the estimate to the link's floor ("limited by
    /// bandwidth"); after 5 such seconds that is not healthy: the link is no excuse for it.
    @Test func theLinksFloorDoesNotExcuseAnEncoderThatPutsOutNothing() {
        var health = ServiceHealth()
        #expect(health.observe(stats(sent: 30)) == (.healthy, true))
        var verdicts: [ServiceHealth.Verdict] = []
        for _ in 0..<6 { verdicts.append(health.observe(stats(sent: 30, limitedBy: "bandwidth")).verdict) }
        #expect(verdicts.prefix(4).allSatisfy { $0 == .healthy }, "held back by the link, for a while")
        #expect(verdicts.last == .unhealthy("the encoder put out no frame for 6 s (the link's floor is no excuse)"))
        var held = stats(sent: 30, limitedBy: "bandwidth")
        held.video.framesEncoded = 45  // encoded, waiting for the link: healthy again
        #expect(health.observe(held).verdict == .healthy)
    }

    /// A capture that delivers nothing is not healthy, even while repeats of its last picture leave.
    @Test func aSilentCaptureIsNotHealthyThoughRepeatsLeave() {
        var health = ServiceHealth()
        func line(sent: Int, captured: Int) -> ShareStats {
            var line = stats(sent: sent)
            line.video.framesCaptured = captured
            return line
        }
        #expect(health.observe(line(sent: 30, captured: 30)) == (.healthy, true))
        #expect(health.observe(line(sent: 60, captured: 60)).verdict == .healthy)
        #expect(health.observe(line(sent: 61, captured: 60)).verdict == .healthy, "one second: not yet")
        #expect(
            health.observe(line(sent: 62, captured: 60)).verdict
                == .unhealthy("the screen's capture delivered no frame for 2 s"))
        #expect(health.observe(line(sent: 90, captured: 75)).verdict == .healthy, "restarted")
        // Nothing sent and nothing captured in the same second: the capture is named at once.
        #expect(
            health.observe(line(sent: 90, captured: 75)).verdict
                == .unhealthy("the screen's capture delivered no frame for 1 s"))
        // The camera alone has no screen capture to judge.
        var camera = ServiceHealth()
        var alone = line(sent: 5, captured: 0)
        alone.video.content = "camera"
        for sent in [5, 6, 7, 8] {
            alone.video.framesSent = sent
            #expect(camera.observe(alone).verdict == .healthy)
        }
    }
}
