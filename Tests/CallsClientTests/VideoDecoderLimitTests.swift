import CallsClient
import Testing
import VideoSend
@testable import CallMedia
@testable import RoomProtocol
@testable import ShareCore
@testable import Signalling

/// The picture size comes from the peer's bitstream: a header that claims a huge picture must not
/// make the decoder allocate one and hand it on.
@Suite struct VideoDecoderLimitTests {
    /// A VP8 keyframe made at 64×64, its header then rewritten to say 8192×8192 (RFC 6386 §9.1:
    /// a 3-byte frame tag, the start code 9d 01 2a, then 14-bit width and height, little-endian).
    @Test func aKeyframeThatClaimsEightThousandSquareIsRefused() throws {
        let encoder = try VP8Encoder(.init(width: 64, height: 64))
        let honest = try #require(try encoder.encode(.testPattern(width: 64, height: 64, index: 0))).bytes
        #expect(Array(honest[3..<6]) == [0x9D, 0x01, 0x2A], "a keyframe's start code")
        let decoder = try VideoDecoder(codec: .vp8)
        let picture = try #require(try decoder.decode(honest))
        #expect(picture.width == 64 && picture.height == 64)

        var huge = honest
        huge.replaceSubrange(6..<10, with: [0x00, 0x20, 0x00, 0x20])  // 8192 × 8192
        let error = #expect(throws: VideoDecoder.Failure.self) { try VideoDecoder(codec: .vp8).decode(huge) }
        #expect(error?.description.contains("4096×2304") == true, "\(String(describing: error))")
    }
}

extension VideoDecoderLimitTests {
    @Test func theLimitIsFourKayByTwoThousandThreeHundredAndFour() {
        #expect(VideoDecoder.maximumPixels == 4096 * 2304)
    }
}
