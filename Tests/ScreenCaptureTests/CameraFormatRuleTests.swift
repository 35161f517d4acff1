import ScreenCapture
import TestSupport
import Testing

/// The format rule: nearest 640 wide, then nearest 30 fps without going over, at a listed rate.
@Suite struct CameraFormatRuleTests {
    func option(_ pixel: CameraPixelFormat, _ w: Int, _ h: Int, _ fps: [Double]) -> CameraFormatOption {
        CameraFormatOption(
            pixel: pixel, width: w, height: h,
            intervals: fps.map {
                $0 == $0.rounded()
                    ? FrameInterval(fps: UInt32($0)) : FrameInterval(numerator: 1001, denominator: UInt32($0 * 1001))
            })
    }

    @Test func vividsListPicks640By360At30OverTheSameWidthAt25() {
        // What vivid's webcam input lists (sizes and their one rate each).
        let listed = [
            option(.yuyv, 320, 180, [30]), option(.yuyv, 640, 360, [30]), option(.yuyv, 640, 480, [25]),
            option(.yuyv, 1280, 720, [12.5]), option(.nv12, 640, 360, [30])
        ]
        let ranked = CameraFormatRule.ranked(listed)
        #expect(ranked.first?.description == "640×360 YUYV at 30 fps")
        #expect(
            ranked.map(\.description).prefix(3) == [
                "640×360 YUYV at 30 fps", "640×360 NV12 at 30 fps", "640×480 YUYV at 25 fps"
            ],
            "the next formats follow the same order")
    }

    @Test func theNearestWidthComesBeforeTheRate() {
        let ranked = CameraFormatRule.ranked([option(.yuyv, 320, 240, [30]), option(.yuyv, 800, 600, [10])])
        #expect(ranked.first?.width == 800, "|800-640| = 160 beats |320-640| = 320, whatever the rate")
    }

    @Test func theRateIsTheNearestThirtyWithoutGoingOver() {
        #expect(
            CameraFormatRule.rate(from: [FrameInterval(fps: 60), FrameInterval(fps: 30), FrameInterval(fps: 15)])?
                .framesPerSecond == 30)
        #expect(
            CameraFormatRule.rate(from: [FrameInterval(fps: 60), FrameInterval(fps: 24), FrameInterval(fps: 15)])?
                .framesPerSecond == 24)
        #expect(
            CameraFormatRule.rate(from: [FrameInterval(fps: 60), FrameInterval(fps: 50)])?.framesPerSecond == 50,
            "with nothing at or below 30, the slowest the camera has")
        let ntsc = FrameInterval(numerator: 1001, denominator: 30000)
        #expect(CameraFormatRule.rate(from: [ntsc, FrameInterval(fps: 60)]) == ntsc)
        #expect(CameraFormatRule.rate(from: []) == nil)
    }

    @Test func aSizeAtThirtyBeatsTheSameWidthOnlyFasterThanThirty() {
        let ranked = CameraFormatRule.ranked([option(.mjpeg, 640, 480, [60]), option(.yuyv, 640, 480, [60, 15])])
        #expect(ranked.first?.description == "640×480 YUYV at 15 fps")
        #expect(ranked.last?.description == "640×480 MJPG at 60 fps")
    }

    @Test func uncompressedLayoutsComeFirstAtTheSameSizeAndRate() {
        let ranked = CameraFormatRule.ranked([
            option(.mjpeg, 640, 480, [30]), option(.nv12, 640, 480, [30]),
            option(.yuyv, 640, 480, [30])
        ])
        #expect(ranked.map(\.pixel) == [.yuyv, .nv12, .mjpeg])
    }

    @Test func fourccsRoundTrip() {
        #expect(CameraPixelFormat.yuyv.fourcc == 0x5659_5559)  // 'Y' 'U' 'Y' 'V' little-endian
        #expect(CameraPixelFormat(fourcc: CameraPixelFormat.mjpeg.fourcc) == .mjpeg)
        #expect(CameraPixelFormat(fourcc: 0x3231_5559) == nil)
        #expect(FrameInterval(numerator: 2, denominator: 25).description == "12.50 fps")
    }
}

/// The synthetic camera's fault scripts.
@Suite struct SyntheticCameraScriptTests {
    @Test func parsesEveryFault() throws {
        let script = try SyntheticCameraScript.parse(
            "synthetic:front?stall=5+3,die=12s,back=20,refuse=640x480,slowopen=500ms,fps=15")
        #expect(script.name == "front")
        #expect(script.stalls == [.init(from: .seconds(5), length: .seconds(3))])
        #expect(script.dies == [.seconds(12)] && script.backs == [.seconds(20)])
        #expect(script.refuses(width: 640, height: 480) && !script.refuses(width: 320, height: 240))
        #expect(script.slowOpen == .milliseconds(500) && script.framesPerSecond == 15)
    }

    @Test func timelinesOfStallsAndUnplugs() throws {
        let script = try SyntheticCameraScript.parse("front?stall=5+3,stall=20,die=10,back=15,die=30")
        let stalled = stride(from: 0, to: 35, by: 5).map { script.stalled(at: .seconds($0)) }
        #expect(stalled == [false, true, false, false, true, true, true])
        let connected = stride(from: 0, to: 35, by: 5).map { script.connected(at: .seconds($0)) }
        #expect(connected == [true, true, false, true, true, true, false])
        #expect(try SyntheticCameraScript.parse("x?silent").stalled(at: .zero))
    }

    @Test func badScriptsSayWhatIsWrong() {
        func error(_ text: String) -> String {
            do { _ = try SyntheticCameraScript.parse(text); return "parsed" } catch { return error.description }
        }
        #expect(error("synthetic:") == "camera: a synthetic camera needs a name of letters, digits, - or _ (got '')")
        #expect(
            error("synthetic:a?wobble=1")
                == "camera: unknown synthetic fault 'wobble' (stall, silent, die, back, refuse, slowopen, fps)")
        #expect(error("synthetic:a?stall=soon") == "camera: stall wants a time such as 5, 5s or 500ms, not 'soon'")
        #expect(error("synthetic:a?refuse=big") == "camera: refuse wants WIDTHxHEIGHT or all, not 'big'")
        #expect(error("synthetic:a?die") == "camera: fault 'die' needs a value, e.g. die=5s")
    }

    @Test func aScriptedCameraDeliversFramesThenStalls() async throws {
        // Real threads, real frames: a camera that stalls 2 s after its set was made delivers some,
        // then none.
        let made = ContinuousClock.now
        let cameras = SyntheticCameras(scripts: [try SyntheticCameraScript.parse("a?stall=2s")])
        let camera = try #require(cameras.cameras().first)
        let frames = Watched(0)
        let stream = try cameras.open(
            camera, format: camera.formats[0], deliver: { _ in frames.change { $0 += 1 } },
            ended: { _ in })
        try? await frames.until("a first frame", within: .seconds(5)) { $0 > 0 }  // `afterStall > 0` judges
        try await Task.sleep(until: made + .milliseconds(2300))
        let afterStall = frames.value
        try await Task.sleep(for: .milliseconds(300))
        stream.stop()
        #expect(afterStall > 0)
        #expect(frames.value == afterStall, "no frame while stalled")
    }

    @Test func aRefusedFormatIsAnError() throws {
        let cameras = SyntheticCameras(scripts: [try SyntheticCameraScript.parse("a?refuse=640x480")])
        let camera = try #require(cameras.cameras().first)
        #expect(throws: CameraError.self) {
            _ = try cameras.open(camera, format: camera.formats[0], deliver: { _ in }, ended: { _ in })
        }
    }
}
