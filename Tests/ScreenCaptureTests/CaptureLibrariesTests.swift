import ScreenCapture
import Testing

@Suite struct CaptureLibrariesTests {
    @Test func linkedCaptureLibrariesReportThemselves() {
        #expect(
            CaptureLibraries.pipewireLibraryVersion.hasPrefix("0.3")
                || CaptureLibraries.pipewireLibraryVersion.hasPrefix("1."))
        #expect(CaptureLibraries.libyuvVersion > 1000)
        #expect(CaptureLibraries.drmModifierName(0) == "LINEAR")
    }
}
