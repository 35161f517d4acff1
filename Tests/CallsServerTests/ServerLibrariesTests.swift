import CallsServer
import Testing

@Suite struct ServerLibrariesTests {
    @Test func linkedSoupIsVersionThree() {
        #expect(ServerLibraries.soupVersion.hasPrefix("3."))
    }
}
