import ScreenWatchdog
import Testing

/// The director's rules as timelines on a manual clock. `at(seconds, event)` feeds one event;
/// `frames(from:marble:)` ticks every 500 ms, `f` meaning a frame arrived in that half second and
/// `-` none. The log holds every action with its time, e.g. `5.0 open A/0`, `5.0 say …`.
@Suite struct CameraDirectorRulesTests {
    typealias Camera = CameraDirectorRules.Camera

    static let formats = ["640×480 YUYV at 30 fps", "320×240 YUYV at 30 fps"]
    static let integrated = Camera(
        id: "v4l2:usb-0000:00:14.0-5/Integrated Camera", name: "Integrated Camera", formats: formats)
    static let c920 = Camera(id: "v4l2:usb-0000:00:14.0-1/HD Pro Webcam C920", name: "Logitech C920", formats: formats)
    static let spare = Camera(id: "synthetic:spare", name: "Synthetic spare", formats: ["640×480 YUYV at 30 fps"])

    struct Harness {
        var rules: CameraDirectorRules
        let start = ContinuousClock.now
        var log: [String] = []
        var count: UInt64 = 0

        init(remembered: Camera?) {
            rules = CameraDirectorRules(remembered: remembered.map { ($0.id, $0.name) })
        }

        func time(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

        mutating func record(_ seconds: Double, _ actions: [CameraDirectorRules.Action]) {
            let stamp = String(format1: seconds)
            for action in actions {
                switch action {
                case .open(let id, let format, _):
                    let name = rules.connected.first { $0.id == id }?.name ?? id
                    log.append("\(stamp) open \(name)/\(format)")
                    count = 0
                case .close: log.append("\(stamp) close")
                case .look: log.append("\(stamp) look")
                case .remember(_, let name): log.append("\(stamp) remember \(name)")
                case .say(let words): log.append("\(stamp) say \(words)")
                }
            }
        }

        mutating func devices(_ seconds: Double, _ list: [Camera]) {
            record(seconds, rules.devices(list, now: time(seconds)))
        }

        mutating func opened(_ seconds: Double) {
            record(seconds, rules.opened(attempt: rules.attempt, now: time(seconds)))
        }

        mutating func failed(_ seconds: Double, _ reason: String = "EBUSY") {
            record(seconds, rules.openFailed(attempt: rules.attempt, reason: reason, now: time(seconds)))
        }

        mutating func ended(_ seconds: Double, disconnected: Bool = true) {
            record(seconds, rules.ended(attempt: rules.attempt, disconnected: disconnected, now: time(seconds)))
        }

        /// Ticks every 500 ms from `from`, one marble character each. A camera that is being
        /// reopened by the rules gets its open reported at the next tick ("o" opens, "x" refuses).
        mutating func frames(from: Double, _ marble: String) {
            for (index, mark) in marble.enumerated() {
                let seconds = from + Double(index) * 0.5
                if case .opening = rules.phase, mark != "." {
                    if mark == "x" { failed(seconds) } else { opened(seconds) }
                }
                if mark == "f" { count += 1 }
                record(seconds, rules.tick(now: time(seconds), frames: count))
            }
        }

        /// The log lines that say something, without their times.
        var words: [String] {
            log.filter { $0.contains(" say ") }.map { String($0.split(separator: " ", maxSplits: 2)[2]) }
        }
    }

    @Test func startsOnTheRememberedCameraAndSaysWhenItWorks() {
        var h = Harness(remembered: Self.c920)
        h.devices(0, [Self.integrated, Self.c920])
        h.opened(0.2)
        h.frames(from: 0.5, "ff")
        #expect(
            h.log == [
                "0.0 say Starting camera…", "0.0 open Logitech C920/0",
                "0.5 say Using Logitech C920 (640×480 YUYV at 30 fps)"
            ])
        #expect(h.rules.status == "Using Logitech C920")
    }

    @Test func aMissingRememberedCameraIsNamedAndAnotherUsed() {
        var h = Harness(remembered: Self.c920)
        h.devices(0, [Self.integrated])
        #expect(
            h.log == [
                "0.0 say Logitech C920 isn't connected; using Integrated Camera", "0.0 say Starting camera…",
                "0.0 open Integrated Camera/0"
            ])
        #expect(h.rules.remembered?.id == Self.c920.id, "the choice stays the C920")
    }

    @Test func withNothingRememberedTheFirstCameraIsRemembered() {
        var h = Harness(remembered: nil)
        h.devices(0, [Self.integrated, Self.c920])
        #expect(h.log.prefix(2) == ["0.0 remember Integrated Camera", "0.0 say Starting camera…"])
    }

    @Test func noCameraLooksEveryThreeSecondsUntilOneAppears() {
        var h = Harness(remembered: nil)
        h.devices(0, [])
        h.frames(from: 0.5, "------------")  // 0.5 … 6.0
        h.devices(6.2, [Self.integrated])
        #expect(
            h.log == [
                "0.0 say No camera found", "3.0 look", "6.0 look", "6.2 say Starting camera…",
                "6.2 open Integrated Camera/0"
            ])
        #expect(h.rules.status == "Starting camera…")
    }

    @Test func noFirstFrameRestartsThenNextFormatThenAnotherCamera() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        // Opened at 0.5, never a frame: 3 s passes at 3.5, but a restart waits for 5 s after the open.
        // Reopened at 5.5 and at 10.5 (reported at the tick after each open).
        h.frames(from: 0.5, "o-------------------------------")  // 0.5 … 16.0
        let steps = h.log.filter { $0.contains("open") || $0.contains("say") }
        #expect(
            steps == [
                "0.0 say Starting camera…", "0.0 open Integrated Camera/0",
                "5.0 say No picture from Integrated Camera within 3 s; restarting it", "5.0 say Starting camera…",
                "5.0 open Integrated Camera/0",
                "10.0 say No picture from Integrated Camera within 3 s after a restart; trying 320×240 YUYV at 30 fps",
                "10.0 say Starting camera…", "10.0 open Integrated Camera/1",
                "13.5 say No picture from Integrated Camera within 3 s; switching to Logitech C920",
                "13.5 say Starting camera…",
                "13.5 open Logitech C920/0"
            ])
        #expect(h.rules.silent == [Self.integrated.id])
    }

    @Test func framesStoppingForThreeSecondsRestartTheSameDevice() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        h.frames(from: 0.5, "offfffffff------------")  // the last frame at 5.0, then none
        #expect(h.log.contains("8.0 say No frames from Integrated Camera for 3 s; restarting it"))
        #expect(h.log.contains("8.0 open Integrated Camera/0"))
        #expect(!h.log.contains { $0.contains("C920") })
    }

    @Test func restartsAreAtMostOnceEveryFiveSeconds() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated])
        h.frames(from: 0.5, "offfffffff------------")  // silence from 5.0: restart at 8.0
        h.frames(from: 11.5, "offf--------------------")  // reopened at 11.5, frames to 13.0, then none
        let opens = h.log.filter { $0.contains(" open ") }
        // Silence from 13.0 restarts at 16.0 (frames in between reset the ladder: a restart, not the
        // next format); no first frame after it (opened 16.5) is due at 19.5 but waits for 21.0.
        #expect(
            opens == [
                "0.0 open Integrated Camera/0", "8.0 open Integrated Camera/0", "16.0 open Integrated Camera/0",
                "21.0 open Integrated Camera/1"
            ])
        #expect(
            zip(opens, opens.dropFirst()).allSatisfy { pair in
                let a = Double(pair.0.split(separator: " ")[0])!, b = Double(pair.1.split(separator: " ")[0])!
                return b - a >= 5
            })
    }

    @Test func withNothingToFallBackToTheCameraIsNamedAndKeptAndAFrameIsNoticed() {
        var h = Harness(remembered: Self.spare)
        h.devices(0, [Self.spare])
        h.frames(from: 0.5, "o------------------")  // 0.5 … 9.5
        #expect(
            h.words == [
                "Starting camera…", "No picture from Synthetic spare within 3 s; restarting it", "Starting camera…",
                "No signal from Synthetic spare — check its input"
            ])
        #expect(h.rules.status == "No signal from Synthetic spare — check its input")
        let before = h.log.count
        h.frames(from: 10, "-----f")
        #expect(h.log.dropFirst(before).filter { $0.contains("say") } == ["12.5 say Synthetic spare is sending again"])
        #expect(h.log.dropFirst(before).contains("11.5 look"), "no signal from 8.5: a look every 3 s")
    }

    @Test func aSilentCameraIsReturnedToOnlyWhenItReconnects() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        h.frames(from: 0.5, "o-------------------------------")  // on the C920 from 13.5
        h.opened(16.1)
        h.frames(from: 16.5, "ff")
        h.devices(17.5, [Self.integrated, Self.c920])  // still listed, still silent: stay
        #expect(h.rules.current?.id == Self.c920.id)
        h.devices(18, [Self.c920])  // unplugged
        h.devices(19, [Self.integrated, Self.c920])  // plugged back: the remembered camera again
        #expect(
            h.log.suffix(3) == [
                "19.0 say Integrated Camera is back; switching to it", "19.0 say Starting camera…",
                "19.0 open Integrated Camera/0"
            ])
    }

    @Test func aDyingCameraFallsBackAtOnce() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        h.frames(from: 0.5, "offff")
        h.ended(2.7)
        #expect(
            h.log.suffix(4) == [
                "2.7 say Camera disconnected", "2.7 say Switching to Logitech C920",
                "2.7 say Starting camera…", "2.7 open Logitech C920/0"
            ])
        h.devices(3, [Self.integrated, Self.c920])  // the dead node is still listed: not returned to
        #expect(h.rules.current?.id == Self.c920.id)
    }

    @Test func anUnpluggedCameraIsLeftAndReturnedToWhenItComesBack() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        h.frames(from: 0.5, "offff")
        h.devices(2.6, [Self.c920])
        h.opened(2.8)
        h.frames(from: 3, "ff")
        h.devices(4.2, [Self.c920, Self.integrated])
        #expect(
            h.words == [
                "Starting camera…", "Using Integrated Camera (640×480 YUYV at 30 fps)", "Camera disconnected",
                "Switching to Logitech C920", "Starting camera…", "Using Logitech C920 (640×480 YUYV at 30 fps)",
                "Integrated Camera is back; switching to it", "Starting camera…"
            ])
        #expect(h.log.contains("2.6 open Logitech C920/0"))
        #expect(h.log.last == "4.2 open Integrated Camera/0")
    }

    @Test func theLastCameraUnpluggedSaysNoCameraFound() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated])
        h.frames(from: 0.5, "off")
        h.devices(2, [])
        #expect(h.log.suffix(3) == ["2.0 say Camera disconnected", "2.0 close", "2.0 say No camera found"])
        #expect(h.rules.status == "No camera found")
    }

    @Test func anOpenNotFinishedInSixSecondsCountsAsRefused() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        let first = h.rules.attempt
        h.frames(from: 0.5, "............")  // 0.5 … 6.0, the open never returns
        #expect(
            h.log.suffix(2) == [
                "6.0 say Integrated Camera refused 640×480 YUYV at 30 fps (did not open within 6 s); trying 320×240 YUYV at 30 fps",
                "6.0 open Integrated Camera/1"
            ])
        // The late open of the first attempt changes nothing.
        let before = h.log.count
        h.record(6.5, h.rules.opened(attempt: first, now: h.time(6.5)))
        #expect(h.log.count == before)
        if case .opening = h.rules.phase {} else { Issue.record("still opening the next format") }
    }

    @Test func aCameraRefusingEveryFormatIsLeftForAnother() {
        var h = Harness(remembered: Self.integrated)
        h.devices(0, [Self.integrated, Self.c920])
        h.failed(0.1)
        h.failed(0.2)
        #expect(
            h.words == [
                "Starting camera…",
                "Integrated Camera refused 640×480 YUYV at 30 fps (EBUSY); trying 320×240 YUYV at 30 fps",
                "Integrated Camera could not be started (EBUSY)", "Switching to Logitech C920", "Starting camera…"
            ])
        #expect(h.log.last == "0.2 open Logitech C920/0")
    }
}

extension String {
    /// One decimal place: 3 → "3.0", 2.75 → "2.8".
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
