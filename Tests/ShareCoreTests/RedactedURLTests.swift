import ShareCore
import Testing

/// The one redaction every printed room link and WHIP URL goes through.
@Suite struct RedactedURLTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080/r/demo?t=9f2c1d", "http://127.0.0.1:8080/r/demo?t=…"),
        ("ws://127.0.0.1:8080/ws/demo?t=9f2c1d", "ws://127.0.0.1:8080/ws/demo?t=…"),
        ("https://user:pw@sfu.example/whip?token=abc&room=1", "https://sfu.example/whip?token=…&room=…"),
        ("https://user@sfu.example:8443/whip", "https://sfu.example:8443/whip"),
        ("https://sfu.example/whip#access_token=abc", "https://sfu.example/whip#…"),
        ("https://sfu.example/whip?abc123", "https://sfu.example/whip?…"),
        ("https://sfu.example/whip?", "https://sfu.example/whip?"),
        ("https://sfu.example/whip", "https://sfu.example/whip"),
        ("http://[::1]:9/r/x?t=1", "http://[::1]:9/r/x?t=…"),
        ("https://a@b@sfu.example/p@q?t=1", "https://sfu.example/p@q?t=…"),  // the last @ of the authority
        ("not a url?t=secret", "not a url?t=…"),
        ("", "")
    ])
    func credentialsAreCutAndTheServerStays(_ url: String, _ shown: String) {
        #expect(redactedURL(url) == shown)
    }

    @Test func redactingTwiceChangesNothing() {
        let once = redactedURL("https://u:p@sfu.example/whip?token=abc#x")
        #expect(redactedURL(once) == once)
    }
}
