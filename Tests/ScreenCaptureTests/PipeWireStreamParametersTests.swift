import ScreenCapture
import Testing

/// The capture stream's sizes, frame rates, buffers and cursor room are chosen in Swift, once; the
/// shim writes what it is given.
@Suite struct PipeWireStreamParametersTests {
    @Test func theDefaultsAskForFullHDAtThirtyUpToAHundredAndFortyFour() {
        let p = PipeWireCapture.StreamParameters()
        #expect([p.width, p.height, p.minWidth, p.minHeight, p.maxWidth, p.maxHeight] == [1920, 1080, 1, 1, 8192, 8192])
        #expect([p.framesPerSecond, p.minFramesPerSecond, p.maxFramesPerSecond] == [30, 0, 144])
        #expect([p.buffers, p.minBuffers, p.maxBuffers] == [8, 1, 32])
        #expect([p.cursorSide, p.maxCursorSide] == [64, 256])
    }

    @Test func aCaptureConfigurationStartsWithTheDefaults() {
        #expect(
            PipeWireCapture.Configuration(nodeID: nil, remoteFD: nil).parameters == PipeWireCapture.StreamParameters())
    }
}
