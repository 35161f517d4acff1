/// The offer/answer rules of a session across renegotiations (RFC 8829, JSEP), as pure values:
/// which mid a new section takes, which earlier section a section's codecs are settled by, and how
/// a new section's header-extension ids are made to agree with the bundle's. The peer connection
/// carries them out when it writes an offer.
public enum JSEPSession {
    /// The mid of a section: the one it already has, else its index in the offer, moved past any
    /// mid the session already uses (a mid once given is never given to another section). The new
    /// mid is added to `used`.
    public static func mid(existing: String?, index: Int, used: inout Set<String>) -> String {
        if let existing {
            used.insert(existing)
            return existing
        }
        var mid = String(index)
        while used.contains(mid) { mid = String((Int(mid) ?? index) + 1) }
        used.insert(mid)
        return mid
    }

    /// The section of our last description whose codecs, payload types and extension ids a section
    /// with `mid` keeps in a renegotiation: its own, or else the first live section of its kind (so
    /// a new section numbers its payloads the way the bundle already does). Nil the first time.
    public static func settled(
        mid: String, kind: MediaKind,
        in last: SessionDescription?
    ) -> MediaDescription? {
        guard let last else { return nil }
        return last.media.first { $0.mid == mid && !$0.isRejected }
            ?? last.media.first { $0.kind == kind && !$0.isRejected }
    }

    /// Our offer's `section` made to keep what `settled` settled: formats, payloads, feedback,
    /// extension ids (without their direction) and reduced-size RTCP. Without RTX among the settled
    /// payloads, the section loses its FID group and every SSRC but `ssrc`.
    public static func keepSettled(_ section: inout MediaDescription, from settled: MediaDescription, ssrc: UInt32) {
        section.formats = settled.formats
        section.payloads = settled.payloads
        section.feedbackForAllPayloads = settled.feedbackForAllPayloads
        section.extensions = settled.extensions.map { ExtensionMap(id: $0.id, uri: $0.uri) }
        section.rtcpReducedSize = settled.rtcpReducedSize
        if !settled.payloads.contains(where: { $0.associatedPayloadType != nil }) {
            section.ssrcGroups = []
            section.ssrcs = section.ssrcs.filter { $0.ssrc == ssrc }
        }
    }

    /// A new section's extensions made to agree with those the bundle already uses: a URI the
    /// bundle has keeps the bundle's id; an extension whose default id the bundle uses for another
    /// URI is left out, so no id ever means two things within the bundle.
    public static func agreeingExtensions(_ offered: [ExtensionMap], bundle: [ExtensionMap]) -> [ExtensionMap] {
        guard !bundle.isEmpty else { return offered }
        let ids = Dictionary(bundle.map { ($0.uri, $0.id) }, uniquingKeysWith: { first, _ in first })
        let taken = Set(ids.values)
        return offered.compactMap { ext in
            if let id = ids[ext.uri] { return ExtensionMap(id: id, uri: ext.uri) }
            return taken.contains(ext.id) ? nil : ext
        }
    }
}
