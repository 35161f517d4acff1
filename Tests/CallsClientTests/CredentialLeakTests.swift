import CallsClient
import Foundation
import ShareCore
import Testing
@testable import Signalling

/// A room link's `?t=` token or a query token in a WHIP URL never reaches an error message or a
/// log: they name the server (and path) without it.
@Suite struct CredentialLeakTests {
    static let secret = "SECRET-7f3a"

    @Test func aRoomLinkThatIsRefusedIsNamedWithoutItsToken() {
        for invite in [
            "http://127.0.0.1:9/x/demo?t=\(Self.secret)", "ftp://127.0.0.1:9/r/demo?t=\(Self.secret)",
            "http://127.0.0.1:9/r/demo/more?a=1&t=\(Self.secret)#frag"
        ] {
            do {
                _ = try CallSession.socketURL(invite: invite)
                Issue.record("\(invite) was taken")
            } catch {
                #expect(!error.description.contains(Self.secret), "\(error)")
                #expect(error.description.contains("127.0.0.1:9"), "\(error)")
            }
        }
    }

    @Test func aRoomSocketThatCannotConnectIsNamedWithoutItsToken() async throws {
        let url = "ws://127.0.0.1:9/ws/demo?t=\(Self.secret)"
        let capture = LogCapture()
        do {
            _ = try await RoomSocket.connect(
                loop: TestLoop.shared, url: url, timeout: .seconds(3),
                logger: capture.logger())
            Issue.record("connected to port 9")
        } catch {
            #expect(!"\(error)".contains(Self.secret), "\(error)")
            #expect("\(error)".contains("ws://127.0.0.1:9/ws/demo"), "\(error)")
        }
        for record in capture.all {
            #expect(
                !record.message.contains(Self.secret) && !record.metadata.values.contains { $0.contains(Self.secret) })
        }
    }

    @Test func whipAndHTTPErrorsNameTheServerWithoutAQueryToken() {
        let url = "https://user:pw@sfu.example/whip?token=\(Self.secret)"
        let errors: [any Error & CustomStringConvertible] = [
            WHIPError.refused(url: url, status: 401, reason: "Unauthorized", firstLine: nil),
            WHIPError.noAnswer(url: url, after: .seconds(10)),
            WHIPError.unreachable(url: url, reason: "refused"),
            WHIPError.busy(url: url, attempts: 4),
            WHIPError.invalidURL(url),
            WHIPError.badLocation(url: url, location: "ftp://x/?k=\(Self.secret)"),
            WHIPError.alreadyPublished(resource: url),
            HTTPError.timedOut(url: url, after: .seconds(1)),
            HTTPError.transport(url: url, reason: "refused")
        ]
        for error in errors {
            #expect(!error.description.contains(Self.secret), "\(error)")
            #expect(!error.description.contains("pw@"), "\(error)")
            #expect(error.description.contains("sfu.example/whip"), "\(error)")
        }
    }

    @Test func whipLogsNameTheEndpointWithoutAQueryToken() async throws {
        let server = try await WHIPTestServer.start()
        defer { server.stop() }
        let capture = LogCapture()
        var configuration = WHIPClient.Configuration(
            endpoint: server.url("/busy?times=1&retry-after=0&token=\(Self.secret)"))
        configuration.maxRetryAfter = .milliseconds(10)
        let whip = try WHIPClient(
            configuration: configuration,
            http: HTTPClient(loop: TestLoop.shared, logger: capture.logger()),
            logger: capture.logger(), sleep: { _ in })
        _ = try await whip.publish(offer: WHIPClientTests.offer)
        await whip.stop()
        #expect(capture.all.contains { $0.message.contains("is busy") })
        for record in capture.all {
            #expect(!record.message.contains(Self.secret), "\(record.message)")
            #expect(!record.metadata.values.contains { $0.contains(Self.secret) }, "\(record.metadata)")
        }
    }
}
