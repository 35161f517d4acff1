import Testing
@testable import VideoSend

/// The camera's limits beside a shared screen (DESIGN.md "Send policies": 500 kbit/s and 360 lines,
/// its defaults back when the share stops), for cameras of every shape.
@Suite struct CameraCapTests {
    @Test func besideAScreenEveryShapeEndsAtThreeHundredSixtyLines() {
        for (width, height) in [(640, 480), (1280, 720), (1920, 1080), (320, 240), (480, 640), (1024, 1024)] {
            let (bitrate, longSide) = CameraCap.limits(besideScreen: true, width: width, height: height)
            #expect(bitrate == 500_000)
            let (w, h) = SendShaper.fit(width: width, height: height, longSide: longSide)
            #expect(min(w, h) <= CameraCap.besideScreenLines, "\(width)×\(height) → \(w)×\(h)")
            // Not smaller than it needs to be: a camera already under 360 lines keeps its size.
            if min(width, height) <= 360 { #expect(w == width && h == height) } else { #expect(min(w, h) >= 358) }
        }
    }

    @Test func withoutAScreenTheDefaultsComeBack() {
        let free = CameraCap.limits(besideScreen: false, width: 640, height: 480)
        #expect(free.maxBitrate == CameraCap.defaultBitrate && free.maxLongSide == CameraCap.defaultLongSide)
        let own = CameraCap.limits(
            besideScreen: false, width: 640, height: 480, defaultBitrate: 700_000, defaultLongSide: 640)
        #expect(own.maxBitrate == 700_000 && own.maxLongSide == 640)
    }

    @Test func theCapNeverRaisesACameraAboveItsDefaults() {
        let small = CameraCap.limits(
            besideScreen: true, width: 1280, height: 720, defaultBitrate: 300_000, defaultLongSide: 480)
        #expect(small.maxBitrate == 300_000 && small.maxLongSide == 480)
    }

    @Test func beforeTheFirstFrameTheCapAssumesASixteenByNineCamera() {
        let (bitrate, longSide) = CameraCap.limits(besideScreen: true, width: 0, height: 0)
        #expect(bitrate == 500_000 && longSide == 640)
    }
}
