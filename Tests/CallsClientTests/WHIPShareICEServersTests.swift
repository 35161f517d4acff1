@testable import CallsClient
import Testing
@testable import Signalling
@testable import WebRTCTransport

/// The endpoint's `Link: rel="ice-server"` entries become ICE configuration for a second publish.
@Suite struct WHIPShareICEServersTests {
    @Test func linkHeadersBecomeSTUNAndTURNServers() {
        let (servers, skipped) = WHIPICEServer.parse(linkFields: [
            #"<stun:stun.example.net:3478>; rel="ice-server""#,
            #"<turn:turn.example.net:3479?transport=tcp>; rel="ice-server"; username="u1"; credential="p1"; credential-type="password""#,
            #"<turn:turn.example.net>; rel="ice-server"; username="u2"; credential="p2""#,
            #"<turns:turn.example.net:5349>; rel="ice-server"; username="u3"; credential="p3""#,
            #"<turn:nocreds.example.net>; rel="ice-server""#
        ])
        #expect(skipped == ["turn:nocreds.example.net: a TURN server needs a username and a credential"])
        let (stun, turn) = WHIPShareSession.iceServers(servers)
        #expect(stun == ICEAgent.STUNServer(host: "stun.example.net", port: 3478))
        #expect(
            turn == [
                ICEAgent.TURNServer(
                    host: "turn.example.net", port: 3479, username: "u1", credential: "p1", transport: .tcp),
                ICEAgent.TURNServer(
                    host: "turn.example.net", port: 3478, username: "u2", credential: "p2", transport: .udp),
                ICEAgent.TURNServer(
                    host: "turn.example.net", port: 5349, username: "u3", credential: "p3", transport: .tls)
            ])
    }
}
