import SDPWire
import Testing

@Suite struct JSEPSessionTests {
    @Test func aSectionKeepsItsMidAndANewOneTakesItsIndexPastTheUsedOnes() {
        var used: Set<String> = ["0", "1", "3"]
        #expect(JSEPSession.mid(existing: "1", index: 0, used: &used) == "1")
        #expect(JSEPSession.mid(existing: nil, index: 2, used: &used) == "2")
        #expect(JSEPSession.mid(existing: nil, index: 3, used: &used) == "4", "3 is taken, and now 2 is too")
        #expect(JSEPSession.mid(existing: nil, index: 0, used: &used) == "5", "0…4 are taken")
        #expect(used == ["0", "1", "2", "3", "4", "5"])
    }

    private static let uris = [
        "urn:ietf:params:rtp-hdrext:sdes:mid", "urn:ietf:params:rtp-hdrext:ssrc-audio-level",
        "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    ]

    @Test(arguments: [
        // offered (id, uri index), the bundle's (id, uri index), agreed
        ([(1, 0), (3, 2)], [(4, 0), (9, 2)], [(4, 0), (9, 2)]),  // the bundle's ids win
        ([(1, 0), (3, 2)], [(3, 1)], [(1, 0)]),  // id 3 means another URI: left out
        ([(1, 0), (3, 2)], [], [(1, 0), (3, 2)]),  // nothing settled: ours
        ([(5, 1)], [(2, 0), (2, 2)], [(5, 1)])  // a URI the bundle lacks keeps its free id
    ])
    func extensionIDsAgreeWithTheBundle(offered: [(Int, Int)], bundle: [(Int, Int)], agreed: [(Int, Int)]) {
        func maps(_ list: [(Int, Int)]) -> [ExtensionMap] {
            list.map { ExtensionMap(id: UInt16($0.0), uri: Self.uris[$0.1]) }
        }
        #expect(JSEPSession.agreeingExtensions(maps(offered), bundle: maps(bundle)) == maps(agreed))
    }

    @Test func aSectionIsSettledByItselfThenByTheFirstLiveSectionOfItsKind() throws {
        let last = try SessionDescription.parse(
            [
                "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0",
                "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0", "a=rtpmap:111 opus/48000/2",
                "m=video 0 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:1", "a=rtpmap:96 VP8/90000",
                "m=video 9 UDP/TLS/RTP/SAVPF 102", "c=IN IP4 0.0.0.0", "a=mid:2", "a=rtpmap:102 H264/90000"
            ].joined(separator: "\r\n") + "\r\n")
        #expect(JSEPSession.settled(mid: "2", kind: .video, in: last)?.mid == "2")
        #expect(JSEPSession.settled(mid: "7", kind: .video, in: last)?.mid == "2", "mid 1 is rejected (port 0)")
        #expect(JSEPSession.settled(mid: "1", kind: .video, in: last)?.mid == "2", "a rejected section settles nothing")
        #expect(JSEPSession.settled(mid: "9", kind: .audio, in: last)?.mid == "0")
        #expect(JSEPSession.settled(mid: "0", kind: .audio, in: nil) == nil)
    }
}
