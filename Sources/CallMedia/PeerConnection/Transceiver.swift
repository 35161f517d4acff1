import SDPWire
import ShareCore
import VideoSend

/// One media line of a peer connection (JSEP's RTCRtpTransceiver): a kind, the direction we want,
/// the mid it got in the offer or answer, the SSRCs we send with, and once an exchange completed,
/// what was negotiated for it. The media behind it (sender, encoder, receiver, decoder) is made by
/// the peer connection at negotiation and read through `PeerConnection.statistics()`.
///
/// Thread-safe: what changes is behind a lock.
public final class Transceiver: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case video, audio
        var mediaKind: MediaKind { self == .video ? .video : .audio }
    }

    /// What an offer/answer exchange settled for this transceiver.
    public struct Negotiated: Sendable, Equatable {
        public var mid: String
        /// Our direction as the answer settled it (`inactive` when the section was rejected).
        public var direction: MediaDirection
        public var codec: MediaCodec?
        public var payloadType: UInt8?
        public var rtxPayloadType: UInt8?
        public var extensions: HeaderExtensionIDs
        public var feedback: [String]
        /// The SSRCs we send with; nil when we do not send.
        public var sendSSRC: UInt32?
        public var sendRTXSSRC: UInt32?
        /// The SSRCs the peer announced for what it sends us, if it announced any.
        public var remoteSSRC: UInt32?
        public var remoteRTXSSRC: UInt32?
        /// The simulcast layers the answer took, best first (empty: one stream).
        public var simulcastRIDs: [String] = []

        public var videoCodec: VideoCodec? { codec == .h264 ? .h264 : codec == .vp8 ? .vp8 : nil }
    }

    /// A screen's three simulcast layers: full, half and a quarter of the size.
    public static let screenLayers = ["h", "m", "l"]

    /// Position among the connection's transceivers.
    public let index: Int
    public let kind: Kind
    /// The direction we want: asked for in `addTransceiver` (or `recvonly` for one made for a
    /// remote offer), changed by `PeerConnection.setDirection` before a renegotiation.
    public var direction: MediaDirection { state.withLock { $0.direction } }
    /// The track id written into `a=msid` when this transceiver sends (e.g. "camera", "screen").
    public let trackID: String
    /// The SSRCs written into our description for what we send (a simulcast section's best layer).
    let localSSRC: UInt32
    let localRTXSSRC: UInt32?
    /// The RIDs of the simulcast layers this transceiver offers to send, best first (empty: one
    /// stream). Video only.
    public let simulcastRIDs: [String]
    private let state:
        Locked<(mid: String?, negotiated: Negotiated?, media: TransceiverMedia?, direction: MediaDirection)>
    /// Where the next sender on our SSRCs carries on numbering, once a sender has stopped (a
    /// section that stopped sending and sends again, a codec renegotiated): the same SSRC with
    /// numbers from elsewhere would be refused by SRTP about half the time (an index it passed).
    private let sequences = Locked<(media: UInt16, rtx: UInt16)?>(nil)

    init(index: Int, kind: Kind, direction: MediaDirection, trackID: String? = nil, simulcastRIDs: [String] = []) {
        self.index = index
        self.kind = kind
        self.simulcastRIDs = kind == .video && simulcastRIDs.count > 1 ? simulcastRIDs : []
        self.trackID = trackID ?? (kind == .video ? "screen" : "audio")
        state = Locked((nil, nil, nil, direction))
        localSSRC = .random(in: 1...UInt32.max)
        localRTXSSRC = kind == .video ? .random(in: 1...UInt32.max) : nil
    }

    /// The mid, once an offer or answer named it.
    public var mid: String? { state.withLock { $0.mid } }
    /// What the last completed exchange settled; nil before.
    public var negotiated: Negotiated? { state.withLock { $0.negotiated } }
    /// The SSRC we send with (and the RTX one for video), once negotiated to send.
    public var sendSSRCs: (ssrc: UInt32, rtx: UInt32?)? {
        guard let n = negotiated, let ssrc = n.sendSSRC else { return nil }
        return (ssrc, n.sendRTXSSRC)
    }

    public var description: String {
        let n = negotiated
        return
            "\(kind) mid \(mid ?? "-") \(n?.direction.rawValue ?? direction.rawValue)\(n?.codec.map { " \($0.rawValue)/\(n?.payloadType ?? 0)" } ?? "")"
    }

    func setMid(_ mid: String?) { state.withLock { $0.mid = mid } }
    func setDirection(_ direction: MediaDirection) { state.withLock { $0.direction = direction } }

    func setNegotiated(_ negotiated: Negotiated, media: TransceiverMedia?) {
        state.withLock {
            $0.mid = negotiated.mid
            $0.negotiated = negotiated
            $0.media = media
        }
    }

    package var media: TransceiverMedia? { state.withLock { $0.media } }

    /// Stops `media` (this transceiver's, being replaced or ended), keeping where its sender's
    /// numbering got to.
    func retire(_ media: TransceiverMedia?) {
        guard let media else { return }
        if let sender = media.sender { sequences.withLock { $0 = sender.nextSequenceNumbers } }
        media.stop()
    }

    /// The numbers a new sender starts from: where the last one stopped, or nil for a first sender.
    var continuedSequences: (media: UInt16, rtx: UInt16)? { sequences.withLock { $0 } }
}
