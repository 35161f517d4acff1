@testable import CallsClient
import Testing
@testable import CallMedia
@testable import RoomProtocol

/// The room share's headline: the screen as a WHIP share says it, to one person or to several.
@Suite struct CallStatusLineTests {
    private func peer(
        _ name: String, width: Int, height: Int, fps: Double, kbps: Int, limitedBy: String = "none",
        pair: String = "127.0.0.1:1 host <-> 127.0.0.1:2 host udp"
    ) -> CallStatistics.Peer {
        var peer = CallStatistics.Peer(id: name, name: name)
        var sent = CallStatistics.Sent()
        sent.width = width
        sent.height = height
        sent.fps = fps
        sent.bitrateKbps = kbps
        sent.limitedBy = limitedBy
        sent.codecName = "VP8"
        sent.encoder = "libvpx"
        sent.framesSent = 300
        peer.video = sent
        peer.connection.state = "connected"
        peer.connection.pair = pair
        return peer
    }

    @Test func oneViewer() {
        var stats = CallStatistics()
        stats.sharing = true
        stats.peers = [peer("bea", width: 1280, height: 720, fps: 29.6, kbps: 1400)]
        #expect(stats.statusLines.first == "Screen: 1280×720 at 30 fps, 1.4 Mbit/s, direct (VP8 libvpx) to bea")
        #expect(stats.statusLines[1].hasPrefix("bea: "))
    }

    @Test func whoHearsWhomIsSaidBesideEachPerson() {
        var stats = CallStatistics()
        stats.muted = true
        stats.audioProcessing = "echo cancellation on (webrtc), noise suppression on"
        var bea = CallStatistics.Peer(id: "p2", name: "bea")
        bea.audio = .init(samplesDecoded: 48_000, framesConcealed: 0, levelDbfs: -120, hearing: true)
        bea.audio?.noSound = true
        var cy = CallStatistics.Peer(id: "p3", name: "cy")
        cy.audio = .init(samplesDecoded: 48_000, framesConcealed: 0, levelDbfs: -18.4, hearing: true)
        cy.audio?.speaking = true
        var dan = CallStatistics.Peer(id: "p4", name: "dan")
        dan.audio = .init(samplesDecoded: 48_000, framesConcealed: 0, levelDbfs: -120, hearing: true)
        dan.audio?.muted = true
        stats.peers = [bea, cy, dan]
        let lines = stats.statusLines
        #expect(lines.contains("bea: audio -120 dBFS, no sound, new"))
        #expect(lines.contains("cy: audio -18 dBFS, speaking, new"))
        #expect(lines.contains("dan: audio muted, new"))
        #expect(lines.last == "Microphone: muted, echo cancellation on (webrtc), noise suppression on")
        stats.muted = false
        stats.speaking = true
        #expect(stats.statusLines.last == "Microphone: speaking, echo cancellation on (webrtc), noise suppression on")
    }

    @Test func thePolicyIsNamedOnceTheEncoderSaysIt() {
        var stats = CallStatistics()
        stats.sharing = true
        var bea = peer("bea", width: 1920, height: 1080, fps: 4, kbps: 1100)
        bea.video?.policy = "detail"
        stats.peers = [bea]
        #expect(stats.statusLines.first == "Screen: 1920×1080 at 4 fps, 1.1 Mbit/s, detail, direct (VP8 libvpx) to bea")
        var cy = peer("cy", width: 1920, height: 1080, fps: 4, kbps: 900)
        cy.video?.policy = "detail"
        stats.peers = [bea, cy]
        #expect(
            stats.statusLines.first
                == "Screen to 2 people: 1920×1080 at 4 fps; 2.0 Mbit/s in all, detail, direct (VP8 libvpx)")
    }

    @Test func severalViewersGettingTheSame() {
        var stats = CallStatistics()
        stats.sharing = true
        stats.peers = [
            peer("bea", width: 1280, height: 720, fps: 30, kbps: 1400),
            peer("cy", width: 1280, height: 720, fps: 30, kbps: 900)
        ]
        #expect(
            stats.statusLines.first == "Screen to 2 people: 1280×720 at 30 fps; 2.3 Mbit/s in all, direct (VP8 libvpx)")
    }

    @Test func severalViewersOneHeldBackAndRelayed() {
        var stats = CallStatistics()
        stats.sharing = true
        stats.peers = [
            peer("bea", width: 1280, height: 720, fps: 30, kbps: 1400),
            peer(
                "cy", width: 640, height: 360, fps: 15, kbps: 300, limitedBy: "bandwidth",
                pair: "10.0.0.1:1 relay <-> 10.0.0.2:2 host udp")
        ]
        #expect(
            stats.statusLines.first
                == "Screen to 2 people: bea 1280×720 at 30 fps; cy 640×360 at 15 fps, limited by bandwidth; 1.7 Mbit/s in all, direct and relayed (VP8 libvpx)"
        )
    }

    @Test func noHeadlineWhenNotSharingOrToNobody() {
        var stats = CallStatistics()
        stats.peers = [CallStatistics.Peer(id: "p2", name: "bea")]
        #expect(!(stats.statusLines.first ?? "").hasPrefix("Screen"))
        stats.sharing = true
        #expect(!(stats.statusLines.first ?? "").hasPrefix("Screen"))
    }
}

/// An offer from a new connection is told by its DTLS fingerprint.
@Suite struct CallFingerprintTests {
    @Test func readsEveryFingerprintLineThroughSDPWire() {
        let sha256 = "sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":")
        let sha1 = "sha-1 " + (0..<20).map { _ in "CD" }.joined(separator: ":")
        let sdp =
            "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=fingerprint:\(sha256)\r\n"
            + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=fingerprint:\(sha1.uppercased())\r\n"
        #expect(RoomCallRules.fingerprints(in: sdp) == [sha256, sha1])
        #expect(RoomCallRules.fingerprints(in: "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n").isEmpty)
        #expect(RoomCallRules.fingerprints(in: "").isEmpty)
    }
}
