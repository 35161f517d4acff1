import CallsClient
import Testing

@Suite struct TransportLibrariesTests {
    @Test func linkedTransportLibrariesReportThemselves() {
        #expect(TransportLibraries.openSSLVersion.hasPrefix("OpenSSL 3"))
        #expect(TransportLibraries.srtpVersion.hasPrefix("libsrtp2"))
        #expect(TransportLibraries.opusVersion.hasPrefix("libopus"))
        #expect(TransportLibraries.niceReadyStateName == "ready")
    }
}
