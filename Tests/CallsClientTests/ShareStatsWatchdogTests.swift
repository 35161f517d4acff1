import CallsClient
import Foundation
import ScreenWatchdog
import ShareTooling
import StatsLine
import Testing
@testable import RoomProtocol

/// The watchdog's status as a share line carries it: written by `ShareStats` (`--stats-json`),
/// read back by `sharectl diagnose`'s reader, and said on the status line's second line.
@Suite struct ShareStatsWatchdogTests {
    static let step = WatchdogStatus.Step(
        number: 3, t: 17, action: "rebuild", subject: "bea",
        reason: "Bea still reports the screen stalled 6 s after the first keyframe left")

    @Test func theWatchdogGoesIntoTheStatsLineAndComesBackOutOfIt() throws {
        var stats = ShareStats()
        stats.t = 18
        stats.video.fpsSent = 30
        stats.watchdog = WatchdogStatus(
            state: "recovering", rung: "rebuild", steps: 3, lastStep: Self.step,
            recent: [Self.step], notices: ["Restarting your share for Bea…"])
        let line = stats.jsonLine()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let watchdog = try #require(object["watchdog"] as? [String: Any])
        #expect(watchdog["state"] as? String == "recovering")
        #expect(watchdog["rung"] as? String == "rebuild")
        #expect((watchdog["lastStep"] as? [String: Any])?["reason"] as? String == Self.step.reason)
        let sample = try #require(try StatsFile.parse(line).samples.first)
        #expect(sample.watchdog?.state == "recovering")
        #expect(
            sample.watchdog?.steps == [
                StatsSample.Step(number: 3, t: 17, action: "rebuild", subject: "bea", reason: Self.step.reason)
            ])
    }

    @Test func aShareWithoutAWatchdogWritesNoWatchdogField() throws {
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(ShareStats().jsonLine().utf8)) as? [String: Any])
        #expect(object["watchdog"] == nil)
    }

    @Test func aCameraBesideTheScreenGetsAStatusLineAndItsOwnFigures() throws {
        var stats = ShareStats()
        stats.video.fpsSent = 15
        #expect(stats.statusLines.count == 2)
        var camera = ShareStats.Camera()
        (camera.width, camera.height, camera.fpsSent, camera.bitrateKbps) = (480, 360, 30, 420)
        (camera.framesSent, camera.targetKbps, camera.capped, camera.device) = (90, 500, true, "Synthetic cam")
        stats.camera = camera
        #expect(stats.statusLines.count == 3)
        #expect(
            stats.statusLines[2] == "Camera: 480×360 at 30 fps, 420 kbit/s, capped beside the screen (Synthetic cam)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.jsonLine().utf8)) as? [String: Any])
        let written = try #require(object["camera"] as? [String: Any])
        #expect(
            written["framesSent"] as? Int == 90 && written["height"] as? Int == 360
                && written["targetKbps"] as? Int == 500)
        #expect(written["device"] as? String == "Synthetic cam" && written["capped"] as? Bool == true)
        // A camera sent alone is the first line itself.
        stats.video.content = "camera"
        #expect(stats.statusLines.count == 2 && stats.statusLines[0].hasPrefix("Camera: "))
    }

    @Test func theStatusLineSaysWhatTheWatchdogDoes() {
        var stats = ShareStats()
        stats.t = 20
        #expect(!stats.statusLines[1].contains("watchdog"))
        stats.watchdog = WatchdogStatus()
        #expect(stats.statusLines[1].hasSuffix(", watchdog watching"))
        stats.watchdog = WatchdogStatus(state: "recovering", rung: "rebuild", steps: 3, lastStep: Self.step)
        #expect(
            stats.statusLines[1].hasSuffix(
                ", watchdog recovering at rebuild: rebuild bea 3 s ago (\(Self.step.reason))"))
    }
}
