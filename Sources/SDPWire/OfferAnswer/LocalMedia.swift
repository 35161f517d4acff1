/// Our ICE and DTLS parameters as the offer or answer carries them. Values come from the ICE
/// agent and the DTLS certificate; nothing here creates them.
public struct LocalTransport: Hashable, Sendable {
    public var iceUfrag: String
    public var icePwd: String
    public var iceOptions: [ICEOption]
    public var fingerprint: Fingerprint
    /// `.actpass` in offers; in answers usually `DTLSSetup.answering(offer's setup)`.
    public var setup: DTLSSetup
    /// Candidates already gathered; more may trickle later.
    public var candidates: [ICECandidate]
    /// True when gathering has finished (`a=end-of-candidates`).
    public var endOfCandidates: Bool

    public init(
        iceUfrag: String, icePwd: String, iceOptions: [ICEOption] = [.trickle], fingerprint: Fingerprint,
        setup: DTLSSetup, candidates: [ICECandidate] = [], endOfCandidates: Bool = false
    ) {
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.iceOptions = iceOptions
        self.fingerprint = fingerprint
        self.setup = setup
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
    }

    var attributes: TransportAttributes {
        TransportAttributes(
            iceUfrag: iceUfrag, icePwd: icePwd, iceOptions: iceOptions,
            fingerprints: [fingerprint], setup: setup)
    }
}

/// A track we send: its ids for `a=msid` and its SSRCs for `a=ssrc` and `a=ssrc-group:FID`.
/// A simulcast track names its layers' RIDs instead (best first): `a=rid` and `a=simulcast`, and
/// no `a=ssrc` lines, as browsers write it; its packets say their layer in the RID extension.
public struct LocalTrack: Hashable, Sendable {
    public var streamID: String
    public var trackID: String
    public var ssrc: UInt32
    /// The RTX SSRC; written only when RTX is negotiated.
    public var rtxSSRC: UInt32?
    public var cname: String
    /// Simulcast layers' RIDs, best first; empty for one stream.
    public var rids: [String]

    public init(
        streamID: String, trackID: String, ssrc: UInt32, rtxSSRC: UInt32? = nil, cname: String, rids: [String] = []
    ) {
        self.streamID = streamID
        self.trackID = trackID
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.cname = cname
        self.rids = rids
    }
}

extension MediaDescription {
    /// Fills the transport lines of a section we write. The section that carries the bundle's
    /// transport gets the candidates, and its port and c= from the first of them; the others
    /// say port 9 and `IN IP4 0.0.0.0` as JSEP does.
    mutating func applyLocalTransport(_ local: LocalTransport, carriesCandidates: Bool) {
        transport = local.attributes
        rtcp = RTCPAddress(port: 9, connection: .unspecified)
        connection = .unspecified
        port = 9
        guard carriesCandidates else { return }
        candidates = local.candidates
        endOfCandidates = local.endOfCandidates
        if let first = local.candidates.first {
            port = first.port
            connection = ConnectionData(
                addressType: first.address.contains(":") ? "IP6" : "IP4", address: first.address)
        }
    }

    /// Writes `a=msid`, and `a=ssrc` (cname, msid) with an FID group when `rtx` is true.
    mutating func applyLocalTrack(_ track: LocalTrack, rtx: Bool) {
        let msid = MediaStreamID(streamID: track.streamID, trackID: track.trackID)
        msids = [msid]
        guard track.rids.count < 2 else {
            ssrcGroups = []
            ssrcs = []
            applySimulcast(sending: track.rids)
            return
        }
        var ssrcList = [track.ssrc]
        if rtx, let rtxSSRC = track.rtxSSRC {
            ssrcList.append(rtxSSRC)
            ssrcGroups = [SSRCGroup(semantics: "FID", ssrcs: ssrcList)]
        }
        ssrcs = ssrcList.flatMap { ssrc in
            [
                SSRCAttribute(ssrc: ssrc, name: "cname", value: track.cname),
                SSRCAttribute(ssrc: ssrc, name: "msid", value: msid.sdpValue)
            ]
        }
    }
}
