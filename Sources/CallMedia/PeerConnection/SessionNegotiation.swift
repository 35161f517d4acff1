import SDPWire
import VideoSend
import ShareCore
// The fuzz package compiles this file together with the DTLS files it reads (FuzzNegotiation).
#if canImport(WebRTCTransport)
    import WebRTCTransport
#endif

/// What an offer/answer exchange settled, read from the answer (whoever wrote it) and the remote
/// description (the offer when we answered, the answer when we offered):
/// - for the transport, the peer's ICE credentials and candidates, its DTLS fingerprint, and which
///   DTLS role we play (RFC 5763: the answerer chooses; an `actpass` offerer becomes the server
///   when the answer says `active`);
/// - per media section (by mid), the codec, payload types and header-extension ids both sides use
///   (the answer's: JSEP answers keep the offered numbers), our direction, and the SSRCs the peer
///   announced for what it sends.
public struct SessionNegotiation: Sendable {
    /// The peer's transport, as its description gives it.
    public struct RemoteTransport: Sendable {
        public var iceUfrag: String
        public var icePwd: String
        public var candidates: [String]
        public var endOfCandidates: Bool
        /// Every usable `a=fingerprint` of the description, session and media level, in order;
        /// the certificate must match one `DTLSFingerprint.accepted` keeps.
        public var fingerprints: [DTLSFingerprint]
        public var dtlsRole: DTLSRole
    }

    /// One accepted media section.
    public struct Media: Sendable, Equatable {
        public var mid: String
        public var kind: MediaKind
        /// Our direction as the answer settled it.
        public var direction: MediaDirection
        public var codec: MediaCodec
        public var payloadType: UInt8
        public var rtxPayloadType: UInt8?
        public var extensions: HeaderExtensionIDs
        /// What the other side will send back: `nack`, `nack pli`, `ccm fir`, `transport-cc`, `goog-remb`.
        public var feedback: [String]
        /// The SSRCs the peer announced for this section (`a=ssrc`, `a=ssrc-group:FID`), if any.
        public var remoteSSRC: UInt32?
        public var remoteRTXSSRC: UInt32?
        /// The simulcast layers we send, best first, by RID: those of our offer's `a=simulcast:send`
        /// the answer's `a=simulcast:recv` took, with the RID extension negotiated. Empty: one stream.
        public var simulcastRIDs: [String] = []

        public var videoCodec: VideoCodec? { codec == .h264 ? .h264 : codec == .vp8 ? .vp8 : nil }
    }

    public var transport: RemoteTransport
    /// Accepted sections by mid; a rejected section is absent.
    public var media: [String: Media]

    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        public let description: String
    }

    /// Reads the peer's transport from its description: `remoteIsAnswer` says whether it answered
    /// (then its `a=setup` chooses our role) or offered (then we answer `a=setup:active` to
    /// `actpass` and `passive`, and become the client).
    public static func remoteTransport(_ remote: SessionDescription, remoteIsAnswer: Bool) throws(Failure)
        -> RemoteTransport
    {
        let what = remoteIsAnswer ? "answer" : "offer"
        guard let first = remote.media.first(where: { !$0.isRejected }) else {
            throw Failure(
                description:
                    "the \(what) \(remote.media.isEmpty ? "has no media sections" : "rejects every media section")")
        }
        let transport = remote.transport(for: first)
        guard let ufrag = transport.iceUfrag, let pwd = transport.icePwd else {
            throw Failure(description: "the \(what) has no ICE credentials (a=ice-ufrag, a=ice-pwd)")
        }
        let lines = Self.fingerprintLines(remote)
        guard !lines.isEmpty else {
            throw Failure(description: "the \(what) has no DTLS fingerprint (a=fingerprint)")
        }
        var fingerprints: [DTLSFingerprint] = []
        var refusal: DTLSError?
        for line in lines {
            do {
                let fingerprint = try DTLSFingerprint(sdpValue: "\(line.algorithm) \(line.hexString)")
                if !fingerprints.contains(fingerprint) { fingerprints.append(fingerprint) }
            } catch {
                refusal = refusal ?? error
            }
        }
        guard !fingerprints.isEmpty else {
            throw Failure(description: "the \(what)'s fingerprint is unusable: \(refusal.map { "\($0)" } ?? "")")
        }
        let role: DTLSRole
        switch (remoteIsAnswer, transport.setup) {
        case (_, .holdconn): throw Failure(description: "the \(what) holds the DTLS connection (a=setup:holdconn)")
        case (true, .active): role = .server
        case (true, .passive), (true, .actpass), (true, .none): role = .client
        case (false, .active): role = .server  // we answer passive
        case (false, .passive), (false, .actpass), (false, .none): role = .client  // we answer active
        }
        var candidates: [String] = []
        var endOfCandidates = remote.endOfCandidates
        for section in remote.media where !section.isRejected {
            endOfCandidates = endOfCandidates || section.endOfCandidates
            for candidate in section.candidates where !candidates.contains(candidate.candidateString) {
                candidates.append(candidate.candidateString)
            }
        }
        return RemoteTransport(
            iceUfrag: ufrag, icePwd: pwd, candidates: candidates, endOfCandidates: endOfCandidates,
            fingerprints: fingerprints, dtlsRole: role)
    }

    /// Every `a=fingerprint` of `description`: the session's, then each section's that is not
    /// rejected (a bundle shares one DTLS connection, so any of them names its certificate).
    public static func fingerprintLines(_ description: SessionDescription) -> [SDPWire.Fingerprint] {
        description.transport.fingerprints
            + description.media.filter { !$0.isRejected }.flatMap(\.transport.fingerprints)
    }

    /// Reads a completed exchange. `weOffered` says which of the two is ours.
    public static func read(answer: SessionDescription, offer: SessionDescription, weOffered: Bool) throws(Failure)
        -> SessionNegotiation
    {
        // A mid names one section (RFC 9143 §7.2.1); with two, which codec goes with which
        // transceiver would be a guess.
        for (description, name) in [
            (answer, weOffered ? "the answer" : "our answer"), (offer, weOffered ? "our offer" : "the offer")
        ] {
            var seen = Set<String>()
            for mid in description.media.compactMap(\.mid) where !seen.insert(mid).inserted {
                throw Failure(description: "\(name) has two media sections with a=mid:\(mid)")
            }
        }
        let remote = weOffered ? answer : offer
        let transport = try remoteTransport(remote, remoteIsAnswer: weOffered)
        var media: [String: Media] = [:]
        let what = weOffered ? "the answer" : "our answer"
        for section in answer.media where !section.isRejected {
            guard let mid = section.mid, let offered = offer.media(mid: mid) else { continue }
            let answered = answer.direction(of: section)
            let direction = weOffered ? answered.reversed : answered
            let extensions = HeaderExtensionIDs(section.extensions)
            let remoteSection = weOffered ? section : offered
            let (remoteSSRC, remoteRTX) = Self.announcedSSRCs(remoteSection)
            switch section.kind {
            case .video:
                var chosen: Media?
                for payload in section.payloads {
                    guard let name = payload.rtpMap?.encodingName.lowercased() else { continue }
                    let codec: MediaCodec? = name == "h264" ? .h264 : name == "vp8" ? .vp8 : nil
                    guard let codec else { continue }
                    if codec == .h264, payload.parameter("packetization-mode") != "1" { continue }
                    chosen = Media(
                        mid: mid, kind: .video, direction: direction, codec: codec, payloadType: payload.payloadType,
                        rtxPayloadType: section.rtxPayloadType(for: payload.payloadType), extensions: extensions,
                        feedback: (payload.feedback + section.feedbackForAllPayloads).map {
                            [$0.type, $0.parameter].compactMap { $0 }.joined(separator: " ")
                        },
                        remoteSSRC: remoteSSRC, remoteRTXSSRC: remoteRTX)
                    break
                }
                if weOffered, direction.sends {
                    chosen?.simulcastRIDs = Self.simulcastRIDs(offered: offered, answer: section)
                }
                guard let chosen else {
                    throw Failure(
                        description:
                            "\(what) accepts video but with no codec we send (H.264 packetization-mode 1 or VP8)")
                }
                media[mid] = chosen
            case .audio:
                guard let opus = section.payloads.first(where: { $0.rtpMap?.isEncoding("opus") == true }) else {
                    throw Failure(description: "\(what) accepts audio but not Opus")
                }
                media[mid] = Media(
                    mid: mid, kind: .audio, direction: direction, codec: .opus, payloadType: opus.payloadType,
                    rtxPayloadType: nil, extensions: extensions, feedback: [],
                    remoteSSRC: remoteSSRC, remoteRTXSSRC: nil)
            default:
                continue
            }
        }
        guard !media.isEmpty else { throw Failure(description: "\(what) accepts no media we send or receive") }
        return SessionNegotiation(transport: transport, media: media)
    }

    /// Our offered simulcast layers the answer receives, in our order (RFC 8853 §5.3: an answer
    /// lists the streams it takes in `a=simulcast:recv`). None unless at least two are taken and
    /// the answer keeps the RID extension, without which a layer's packets cannot be told apart.
    static func simulcastRIDs(offered: MediaDescription, answer: MediaDescription) -> [String] {
        guard let ours = offered.simulcast?.send, ours.count > 1, let theirs = answer.simulcast?.recv,
            HeaderExtensionIDs(answer.extensions).rid != nil
        else { return [] }
        let taken = Set(theirs.map(\.rid))
        let rids = ours.map(\.rid).filter { taken.contains($0) }
        return rids.count > 1 ? rids : []
    }

    /// The media SSRC and its RTX SSRC a section announces (FID group first, else its first SSRC).
    static func announcedSSRCs(_ section: MediaDescription) -> (UInt32?, UInt32?) {
        if let fid = section.ssrcGroups.first(where: { $0.semantics == "FID" }), fid.ssrcs.count >= 2 {
            return (fid.ssrcs[0], fid.ssrcs[1])
        }
        return (section.ssrcs.first?.ssrc, nil)
    }
}

/// The header-extension ids a section negotiated (RFC 8285), for the extensions sharectl uses.
public struct HeaderExtensionIDs: Sendable, Equatable {
    public var mid: UInt8?
    public var absSendTime: UInt8?
    public var transportSequence: UInt8?
    /// A simulcast layer's RID on its packets and on its retransmissions.
    public var rid: UInt8?
    public var repairedRID: UInt8?

    public init(
        mid: UInt8? = nil, absSendTime: UInt8? = nil, transportSequence: UInt8? = nil, rid: UInt8? = nil,
        repairedRID: UInt8? = nil
    ) {
        self.mid = mid
        self.absSendTime = absSendTime
        self.transportSequence = transportSequence
        self.rid = rid
        self.repairedRID = repairedRID
    }

    init(_ maps: [ExtensionMap]) {
        func id(_ uri: String) -> UInt8? {
            maps.first { $0.uri == uri }.flatMap { $0.id >= 1 && $0.id <= 255 ? UInt8($0.id) : nil }
        }
        self.init(
            mid: id(ExtensionMap.sdesMid), absSendTime: id(ExtensionMap.absSendTime),
            transportSequence: id(ExtensionMap.transportWideCC), rid: id(ExtensionMap.rtpStreamID),
            repairedRID: id(ExtensionMap.repairedRTPStreamID))
    }

    /// What a send stream on section `mid` stamps; a simulcast layer's also carry its `rid`.
    func sendExtensions(mid value: String, rid layer: String? = nil) -> SendExtensions {
        SendExtensions(
            mid: mid.map { ($0, value) }, absSendTimeID: absSendTime, transportSequenceID: transportSequence,
            rid: layer.flatMap { layer in rid.map { ($0, layer) } },
            repairedRID: layer.flatMap { layer in repairedRID.map { ($0, layer) } })
    }
}
