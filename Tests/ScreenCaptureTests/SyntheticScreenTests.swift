import ScreenCapture
import ShareCore
import TestSupport
import Testing

@Suite struct SyntheticScreenTests {
    @Test func timecodeSurvivesConversionAndScaling() throws {
        let screen = SyntheticScreen(width: 1920, height: 1080)
        let bgrx = screen.render(frame: 4242, wallClockMillis: 1_795_000_000_500, captureMicros: 1)
        #expect(bgrx.format == .bgrx && bgrx.width == 1920 && bgrx.planes[0].stride == 1920 * 4)
        let i420 = try FrameConverter.toI420(bgrx)
        let expected = Timecode(frameNumber: 4242, captureMillis: 1_795_000_000_500)
        #expect(
            Timecode.read(fromLuma: i420.planes[0].bytes, width: 1920, height: 1080, stride: i420.planes[0].stride)
                == expected)
        for (w, h) in [(1280, 720), (640, 360)] {
            let scaled = try FrameConverter.scaleI420(i420, width: w, height: h)
            #expect(
                Timecode.read(fromLuma: scaled.planes[0].bytes, width: w, height: h, stride: scaled.planes[0].stride)
                    == expected,
                "band readable at \(w)×\(h)")
        }
    }

    @Test func contentMovesEveryFrame() {
        let screen = SyntheticScreen(width: 640, height: 360)
        let a = screen.render(frame: 10, wallClockMillis: 0, captureMicros: 0).planes[0].bytes
        let b = screen.render(frame: 11, wallClockMillis: 0, captureMicros: 0).planes[0].bytes
        let bandBytes = Timecode.bandHeight(for: 360) * 640 * 4
        #expect(a[bandBytes...] != b[bandBytes...], "text scrolls and the window moves below the band")
        let again = screen.render(frame: 10, wallClockMillis: 0, captureMicros: 0).planes[0].bytes
        #expect(a == again, "rendering is a function of the frame number")
    }

    @Test func malformedFramesAreRefused() {
        let bad = VideoFrame(format: .bgrx, width: 64, height: 64, planes: [Plane(bytes: [0, 1, 2], stride: 256)])
        #expect(throws: FrameConverter.ConversionError.self) { try FrameConverter.toI420(bad) }
        let noPlanes = VideoFrame(format: .nv12, width: 64, height: 64, planes: [])
        #expect(throws: FrameConverter.ConversionError.self) { try FrameConverter.toI420(noPlanes) }
    }
}

@Suite struct SyntheticScreenSourceTests {
    @Test func deliversFramesWithRisingSequenceUntilStopped() async throws {
        let source = SyntheticScreenSource(width: 320, height: 180, framesPerSecond: 30)
        let queue = FrameQueue(capacity: 64, maxAgeMicros: .max)
        source.start { queue.push($0) }
        try? await until("five frames", within: .seconds(60)) { source.frameCount >= 5 }  // the expectations judge
        source.stop()
        let produced = source.frameCount
        try await Task.sleep(for: .milliseconds(100))
        #expect(source.frameCount == produced, "no frame after stop()")
        var sequences: [UInt64] = []
        while let frame = queue.take(now: 0) { sequences.append(frame.sequence) }
        #expect(sequences.count >= 5)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
    }
}
