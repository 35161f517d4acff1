import Testing
import VideoSend

@Suite struct CodecLibrariesTests {
    @Test func linkedCodecLibrariesReportVersions() {
        #expect(CodecLibraries.x264Build >= 155)
        #expect(CodecLibraries.vpxVersion.hasPrefix("v1."))
        #expect(CodecLibraries.avcodecVersion.split(separator: ".").count == 3)
    }
}
