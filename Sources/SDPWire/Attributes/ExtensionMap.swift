/// `a=extmap:<id>[/<direction>] <uri> [<attributes>]` (RFC 8285 §7): an RTP header extension and
/// the id it travels under, e.g. `a=extmap:4 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`.
public struct ExtensionMap: Hashable, Sendable {
    /// 1–14 for one-byte headers, up to 255 with two-byte headers; 4096–4351 only in offers,
    /// asking the answerer to choose.
    public var id: UInt16
    public var direction: MediaDirection?
    public var uri: String
    /// Extension attributes after the URI, as written.
    public var attributes: String?

    public init(id: UInt16, direction: MediaDirection? = nil, uri: String, attributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.attributes = attributes
    }

    /// Extension URIs sharectl's media engine reads and writes.
    public static let absSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    public static let transportWideCC = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    public static let sdesMid = "urn:ietf:params:rtp-hdrext:sdes:mid"
    /// The RID of a simulcast layer's packets, and of its retransmissions (RFC 8852).
    public static let rtpStreamID = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    public static let repairedRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"

    init(sdpValue value: Substring) throws(SDPError) {
        let parts = fields(value)
        guard parts.count >= 2 else { throw SDPError(reason: "a=extmap needs an id and a URI") }
        let (idText, directionText) = splitOnce(parts[0], at: "/")
        id = try decimal(idText, "a=extmap id")
        guard (1...255).contains(id) || (4096...4351).contains(id) else {
            throw SDPError(reason: "a=extmap id \(id) is out of range (1–255, or 4096–4351 in an offer)")
        }
        if let directionText {
            guard let direction = MediaDirection(rawValue: String(directionText)) else {
                throw SDPError(reason: "a=extmap direction must be sendrecv, sendonly, recvonly or inactive")
            }
            self.direction = direction
        }
        uri = String(parts[1])
        attributes = parts.count > 2 ? parts.dropFirst(2).joined(separator: " ") : nil
    }

    var sdpValue: String {
        var out = String(id)
        if let direction { out += "/" + direction.rawValue }
        out += " " + uri
        if let attributes { out += " " + attributes }
        return out
    }
}
