import ShareCore

/// The URIs of the header extensions sharectl knows, as negotiated by `a=extmap` (RFC 8285 §5).
public enum HeaderExtensionURI {
    public static let absSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    public static let transportWideSequenceNumber =
        "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    public static let mid = "urn:ietf:params:rtp-hdrext:sdes:mid"
    public static let rtpStreamID = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    public static let repairedRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
}

/// A header extension value with a known URI and wire form.
public protocol RTPHeaderExtensionValue: Hashable, Sendable {
    /// The URI the value is negotiated under.
    static var uri: String { get }
    /// Reads the value from an element's data.
    init(extensionData: [UInt8]) throws(WireError)
    /// The element data for this value.
    var extensionData: [UInt8] { get }
}

/// The negotiated mapping between local extension IDs and URIs for one RTP session (one
/// `a=extmap` line per entry).
public struct HeaderExtensionMap: Hashable, Sendable {
    private var urisByID: [UInt8: String] = [:]
    private var idsByURI: [String: UInt8] = [:]

    public init() {}

    /// A map from `id → URI` entries.
    public init(_ entries: [UInt8: String]) {
        for (id, uri) in entries { register(id: id, uri: uri) }
    }

    /// Maps `id` to `uri`, replacing whatever either was mapped to before.
    public mutating func register(id: UInt8, uri: String) {
        if let oldURI = urisByID[id] { idsByURI[oldURI] = nil }
        if let oldID = idsByURI[uri] { urisByID[oldID] = nil }
        urisByID[id] = uri
        idsByURI[uri] = id
    }

    public func id(for uri: String) -> UInt8? { idsByURI[uri] }
    public func uri(for id: UInt8) -> String? { urisByID[id] }

    /// Every entry, ordered by ID.
    public var entries: [(id: UInt8, uri: String)] {
        urisByID.sorted { $0.key < $1.key }.map { (id: $0.key, uri: $0.value) }
    }

    /// The value of type `V` among `elements`: nil when `V` is not negotiated or not present, and a
    /// thrown error when present but malformed.
    public func value<V: RTPHeaderExtensionValue>(
        _ type: V.Type, in elements: [HeaderExtensionElement]
    ) throws(WireError) -> V? {
        guard let id = idsByURI[V.uri], let element = elements.first(where: { $0.id == id }) else { return nil }
        return try V(extensionData: element.data)
    }

    /// The element carrying `value`, or nil when its URI is not negotiated.
    public func element<V: RTPHeaderExtensionValue>(_ value: V) -> HeaderExtensionElement? {
        idsByURI[V.uri].map { HeaderExtensionElement(id: $0, data: value.extensionData) }
    }
}

/// abs-send-time: the send time as 6.18 fixed-point seconds, the low 24 bits of the NTP time
/// (it wraps every 64 s). 3 bytes on the wire.
/// http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
public struct AbsSendTime: RTPHeaderExtensionValue {
    public static let uri = HeaderExtensionURI.absSendTime
    /// 2^18 units per second.
    public static let unitsPerSecond = 1 << 18

    /// The 24-bit raw value: 6 bits of seconds, 18 bits of fraction.
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue & 0xFF_FFFF }

    /// The time `seconds` (any epoch, NTP's by convention) modulo 64 s, rounded to 2^-18 s.
    /// Non-finite input gives zero.
    public init(seconds: Double) {
        guard seconds.isFinite else {
            self.init(rawValue: 0)
            return
        }
        let wrapped = seconds.truncatingRemainder(dividingBy: 64)  // (-64, 64)
        let units = Int64((wrapped * Double(Self.unitsPerSecond)).rounded())
        self.init(rawValue: UInt32(truncatingIfNeeded: units & 0xFF_FFFF))
    }

    /// The time `duration` since an epoch (NTP's by convention) modulo 64 s, rounded to 2^-18 s.
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        // 10^18 attoseconds = 2^18 units × 5^18, so one unit is 5^18 attoseconds exactly.
        let attosecondsPerUnit: Int64 = 3_814_697_265_625
        let fraction = (attoseconds + (attoseconds >= 0 ? 1 : -1) * attosecondsPerUnit / 2) / attosecondsPerUnit
        let units = (seconds % 64) * Int64(Self.unitsPerSecond) + fraction
        self.init(rawValue: UInt32(truncatingIfNeeded: units & 0xFF_FFFF))
    }

    /// Seconds in 0..<64.
    public var seconds: Double { Double(rawValue) / Double(Self.unitsPerSecond) }

    public init(extensionData: [UInt8]) throws(WireError) {
        guard extensionData.count == 3 else {
            throw .invalid(what: "rtp: abs-send-time", reason: "\(extensionData.count) bytes, expected 3")
        }
        self.init(rawValue: UInt32(extensionData[0]) << 16 | UInt32(extensionData[1]) << 8 | UInt32(extensionData[2]))
    }

    public var extensionData: [UInt8] {
        [
            UInt8(truncatingIfNeeded: rawValue >> 16), UInt8(truncatingIfNeeded: rawValue >> 8),
            UInt8(truncatingIfNeeded: rawValue)
        ]
    }
}

/// The transport-wide sequence number: one 16-bit counter across all media of a transport, fed
/// back by transport-cc (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2). 2 bytes.
public struct TransportSequenceNumber: RTPHeaderExtensionValue {
    public static let uri = HeaderExtensionURI.transportWideSequenceNumber

    public var value: UInt16

    public init(_ value: UInt16) { self.value = value }

    public init(extensionData: [UInt8]) throws(WireError) {
        guard extensionData.count == 2 else {
            throw .invalid(
                what: "rtp: transport-wide sequence number", reason: "\(extensionData.count) bytes, expected 2")
        }
        self.init(UInt16(extensionData[0]) << 8 | UInt16(extensionData[1]))
    }

    public var extensionData: [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
}

/// The media identification (RFC 8843 §15, RFC 7941): the `a=mid` of the m-section the packet
/// belongs to, as UTF-8 text without a terminator.
public struct MediaIdentification: RTPHeaderExtensionValue {
    public static let uri = HeaderExtensionURI.mid

    public var value: String

    public init(_ value: String) { self.value = value }

    /// Throws for empty data or data that is not UTF-8.
    public init(extensionData: [UInt8]) throws(WireError) {
        guard !extensionData.isEmpty else {
            throw .invalid(what: "rtp: mid", reason: "empty")
        }
        guard let value = String(validating: extensionData, as: UTF8.self) else {
            throw .invalid(what: "rtp: mid", reason: "not UTF-8")
        }
        self.init(value)
    }

    public var extensionData: [UInt8] { Array(value.utf8) }
}

extension RTPPacket {
    /// The value of type `V` in this packet's header extension under `map`, or nil if absent.
    public func headerExtensionValue<V: RTPHeaderExtensionValue>(
        _ type: V.Type, map: HeaderExtensionMap
    ) throws(WireError) -> V? {
        guard headerExtension != nil else { return nil }
        return try map.value(type, in: headerExtensionElements())
    }
}
