import Foundation
import ScreenCapture
import ShareCore
import Testing

/// One captured frame handed to several encoders (simulcast layers, connections) is converted to
/// I420 once, and each size is scaled once, whichever thread asks first; the pictures are the
/// ones each encoder would have made alone.
@Suite struct SharedConversionTests {
    @Test func threeLayersOnThreeThreadsMakeEachPictureOnceAndTheSamePictures() throws {
        let screen = SyntheticScreen(width: 1920, height: 1080)
        let frame = screen.render(frame: 77, wallClockMillis: 0, captureMicros: 5).sharingConversions()
        let sizes = [(1920, 1080), (960, 540), (480, 270), (960, 540), (1920, 1080), (480, 270)]
        let pictures = Locked<[Int: VideoFrame]>([:])
        // Six encoders' threads at once, two of each size.
        DispatchQueue.concurrentPerform(iterations: sizes.count) { index in
            let picture = try? FrameConverter.i420(frame, width: sizes[index].0, height: sizes[index].1)
            pictures.withLock { $0[index] = picture }
        }
        // The full size once, then 960 and 480 once each.
        #expect(frame.conversions?.picturesMade == 3)
        var unshared = frame
        unshared.conversions = nil
        for (index, size) in sizes.enumerated() {
            let expected = try FrameConverter.i420(unshared, width: size.0, height: size.1)
            let picture = try #require(pictures.withLock { $0[index] })
            #expect(picture.width == size.0 && picture.height == size.1)
            #expect(picture.planes == expected.planes, "the \(size.0)×\(size.1) picture is the one made alone")
            #expect(picture.captureMicros == 5 && picture.conversions == nil)
        }
    }

    @Test func aFrameWithoutSharedConversionsIsConvertedByEachCaller() throws {
        let frame = SyntheticScreen(width: 640, height: 360).render(frame: 1, wallClockMillis: 0, captureMicros: 0)
        #expect(frame.conversions == nil)
        let a = try FrameConverter.i420(frame, width: 320, height: 180)
        #expect(a.width == 320 && a.conversions == nil)
        // A frame that already shares keeps its table (a fan-out behind another).
        let shared = frame.sharingConversions()
        #expect(shared.sharingConversions().conversions === shared.conversions)
    }

    @Test func aConversionThatFailsIsNotKeptAndFailsForEachCaller() {
        let bad = VideoFrame(format: .bgrx, width: 64, height: 64, planes: [Plane(bytes: [0, 1, 2], stride: 256)])
            .sharingConversions()
        for _ in 0..<2 {
            #expect(throws: FrameConverter.ConversionError.self) { try FrameConverter.i420(bad, width: 32, height: 32) }
        }
        #expect(bad.conversions?.picturesMade == 0)
    }
}
