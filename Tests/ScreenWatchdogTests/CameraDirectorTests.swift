import Foundation
import ScreenCapture
import ScreenWatchdog
import ShareCore
import TestSupport
import Testing

/// The director itself, with real threads and synthetic cameras: what it says, what it remembers,
/// and that frames keep coming through one feed across a switch. Conditions are waited for with
/// generous hang guards (`Self.hangGuard` unless said); nothing here judges timing.
@Suite struct CameraDirectorTests {
    final class Record: Sendable {
        let steps = Watched<[String]>([])
        let frames = Watched(0)
        let sizes = Locked<Set<String>>([])
        var said: [String] { steps.value }
    }

    static let hangGuard: Duration = .seconds(120)

    func memory() -> CameraMemory {
        CameraMemory(path: NSTemporaryDirectory() + "sharectl-camera-test-\(UUID().uuidString)/camera")
    }

    @Test func aDyingCameraIsLeftForTheSpareAndTheSameFeedKeepsDelivering() async throws {
        // The script's clock starts when the cameras are made. On a machine busy enough that the
        // director first looks, or the front camera's first frame arrives, after the scripted
        // death, the run shows a different (right) story — "isn't connected", or a camera that
        // died while starting — and cannot judge the switch: try again with a later death.
        for dieAfter in [5, 15, 40] {
            let record = Record()
            let memory = memory()
            let cameras = SyntheticCameras(scripts: [
                try SyntheticCameraScript.parse("front?die=\(dieAfter)s"),
                try SyntheticCameraScript.parse("spare")
            ])
            let director = CameraDirector(
                providers: [cameras], choice: .device("synthetic:front"), memory: memory,
                logger: .disabled
            ) { step in record.steps.change { $0.append(step.words) } }
            director.feed.start { frame in
                record.frames.change { $0 += 1 }
                record.sizes.withLock { _ = $0.insert("\(frame.width)x\(frame.height)") }
            }
            let task = Task { await director.run() }
            try await record.steps.until(
                "the director switches to the spare",
                within: .seconds(dieAfter) + Self.hangGuard
            ) {
                $0.contains("Using Synthetic spare (640×480 YUYV at 30 fps)")
            }
            let atSwitch = record.frames.value
            try await record.frames.until("frames from the spare", within: Self.hangGuard) { $0 > atSwitch + 10 }
            task.cancel()
            await task.value
            director.feed.stop()
            if !record.said.contains("Using Synthetic front (640×480 YUYV at 30 fps)") { continue }
            #expect(
                record.said == [
                    "Starting camera…", "Using Synthetic front (640×480 YUYV at 30 fps)", "Camera disconnected",
                    "Switching to Synthetic spare", "Starting camera…",
                    "Using Synthetic spare (640×480 YUYV at 30 fps)"
                ])
            #expect(memory.load()?.id == "synthetic:front", "the camera asked for is remembered")
            #expect(record.sizes.withLock { $0 } == ["640x480"])
            return
        }
        Issue.record("the director never started before the scripted death, even 40 s after the cameras were made")
    }

    @Test func theRememberedCameraIsStartedOnAndAMissingOneIsNamed() async throws {
        let record = Record()
        let memory = memory()
        try memory.save(id: "v4l2:usb-1/HD Pro Webcam C920", name: "Logitech C920")
        let cameras = SyntheticCameras(scripts: [try SyntheticCameraScript.parse("integrated")])
        let director = CameraDirector(providers: [cameras], choice: .auto, memory: memory, logger: .disabled) { step in
            record.steps.change { $0.append(step.words) }
        }
        director.feed.start { _ in record.frames.change { $0 += 1 } }
        let task = Task { await director.run() }
        try await record.frames.until("more than five frames", within: Self.hangGuard) { $0 > 5 }
        task.cancel()
        await task.value
        #expect(record.said.first == "Logitech C920 isn't connected; using Synthetic integrated")
        #expect(memory.load()?.name == "Logitech C920", "still the choice for next time")
    }

    @Test func aCameraWithNoSignalIsNamedAndKept() async throws {
        let record = Record()
        let cameras = SyntheticCameras(scripts: [try SyntheticCameraScript.parse("dark?silent")])
        let director = CameraDirector(providers: [cameras], choice: .auto, memory: nil, logger: .disabled) { step in
            record.steps.change { $0.append(step.words) }
        }
        let task = Task { await director.run() }
        try await record.steps.until("the director says there is no signal", within: .seconds(150)) {
            $0.contains("No signal from Synthetic dark — check its input")
        }
        let status = await director.status
        task.cancel()
        await task.value
        #expect(status == "No signal from Synthetic dark — check its input")
        #expect(
            record.said.filter { $0.hasPrefix("No picture from Synthetic dark") }.count == 2,
            "a restart and the next format were tried first")
    }
}
