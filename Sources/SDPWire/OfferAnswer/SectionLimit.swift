/// How many audio and video sections of a remote offer we take. Each taken section costs a
/// transceiver, and a receiving one a decoder thread, so an offer of a thousand video sections
/// must not buy a thousand of them: past the limit a section is answered rejected (port 0), as
/// JSEP (RFC 9429 §5.3.1) rejects an m-line it will not use. Counted in offer order; sections the
/// offer rejects itself, and kinds other than audio and video, do not count. A pure value.
public struct SectionLimit: Hashable, Sendable {
    public var audio: Int
    public var video: Int

    public init(audio: Int, video: Int) {
        self.audio = audio
        self.video = video
    }

    /// Eight of each: a camera, a screen and their audio for a room of a few people, with room over.
    public static let sharectl = SectionLimit(audio: 8, video: 8)

    /// One flag per section of `offer`, in order: true when the section is within the limit.
    /// Rejected sections and other kinds are true (they are answered as they are).
    public func admitted(_ offer: SessionDescription) -> [Bool] {
        var audioLeft = audio, videoLeft = video
        return offer.media.map { section in
            guard !section.isRejected else { return true }
            switch section.kind {
            case .audio:
                audioLeft -= 1
                return audioLeft >= 0
            case .video:
                videoLeft -= 1
                return videoLeft >= 0
            default:
                return true
            }
        }
    }
}
