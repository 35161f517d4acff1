import CallsClient
import Testing
@testable import Signalling

/// RFC 6454 origins, as WHIP's token rule compares them.
@Suite struct HTTPOriginTests {
    @Test(arguments: [
        ("https://sfu.example/whip", "https://SFU.example:443/session/1", true),  // case, default port
        ("http://127.0.0.1:8080/whip", "http://127.0.0.1:8080/x?y=1", true),
        ("http://[::1]/whip", "http://[::1]:80/s", true),
        ("https://sfu.example/whip", "http://sfu.example/session/1", false),  // a downgrade
        ("http://sfu.example/whip", "https://sfu.example/session/1", false),  // another scheme
        ("http://127.0.0.1:8080/whip", "http://127.0.0.2:8080/whip", false),  // another host
        ("http://127.0.0.1:8080/whip", "http://127.0.0.1:8081/whip", false),  // another port
        ("https://sfu.example/whip", "https://sfu.example.evil/whip", false)
    ])
    func sameOriginIsSchemeHostAndPort(_ a: String, _ b: String, _ same: Bool) {
        #expect((HTTPOrigin(a) == HTTPOrigin(b)) == same, "\(a) vs \(b)")
    }

    @Test func anOriginShowsNoUserPathOrQuery() {
        #expect(HTTPOrigin("https://user:pw@sfu.example/whip?token=abc")?.description == "https://sfu.example:443")
        #expect(HTTPOrigin("http://[::1]:9/x")?.description == "http://[::1]:9")
        #expect(HTTPOrigin("ftp://example.net/") == nil)
        #expect(HTTPOrigin("not a url") == nil)
    }

    @Test func aLocationThatLeavesHTTPSForHTTPIsCalledADowngrade() {
        let error = WHIPError.locationLeavesOrigin(
            url: "https://sfu.example/whip", status: 308,
            location: "http://sfu.example/whip")
        #expect(
            error.description == "WHIP: https://sfu.example/whip redirected (308) to plain http "
                + "(http://sfu.example:80); refused: the bearer token and the session would travel unencrypted")
    }
}
