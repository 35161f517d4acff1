import CallsClient
import Testing
@testable import CallMedia
@testable import WebRTCTransport

@Suite struct TransportLibrariesTests {
    @Test func linkedTransportLibrariesReportThemselves() {
        #expect(TransportLibraries.openSSLVersion.hasPrefix("OpenSSL 3"))
        #expect(TransportLibraries.srtpVersion.hasPrefix("libsrtp2"))
        #expect(MediaLibraries.opusVersion.hasPrefix("libopus"))
        #expect(TransportLibraries.niceReadyStateName == "ready")
    }
}
