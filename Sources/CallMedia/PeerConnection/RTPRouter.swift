import RTPWire
import ShareCore

/// Where an incoming RTP packet belongs (JSEP RFC 9429 §5.9 / BUNDLE RFC 9143 §9.2): by SSRC when
/// the SSRC is known (from the remote description's `a=ssrc`, or learned); else by the MID header
/// extension (a MID no receiving transceiver has is dropped); else, for a packet without a MID, by
/// payload type when exactly one transceiver receives it. What a packet teaches
/// is kept, so later packets of the stream are routed by SSRC alone. A pure value.
///
/// A renegotiation makes a new router `following` the last one: a stream the last one routed to a
/// section that receives nothing now (a screen section replaced by a rebuild or a share again), or
/// one the peer now announces another SSRC for, is retired. Its packets still in flight are dropped
/// unless their MID names a receiving section: without a MID (RTX, a sender that stopped writing
/// it) the new section for the same payload type would take them, and one packet of another
/// stream sets that receiver's sequence numbers astray.
public struct RTPRouter: Sendable, Equatable {
    /// One receiving transceiver's routing facts.
    public struct Entry: Sendable, Equatable {
        public var index: Int
        public var mid: String
        public var payloadType: UInt8
        public var rtxPayloadType: UInt8?
        public var ssrc: UInt32?
        public var rtxSSRC: UInt32?

        public init(
            index: Int, mid: String, payloadType: UInt8, rtxPayloadType: UInt8?, ssrc: UInt32?, rtxSSRC: UInt32?
        ) {
            self.index = index
            self.mid = mid
            self.payloadType = payloadType
            self.rtxPayloadType = rtxPayloadType
            self.ssrc = ssrc
            self.rtxSSRC = rtxSSRC
        }
    }

    public struct Route: Sendable, Equatable {
        /// The transceiver's index among the connection's transceivers.
        public var index: Int
        /// The packet is a retransmission (RFC 4588) to unwrap before use.
        public var isRTX: Bool

        public init(index: Int, isRTX: Bool) {
            self.index = index
            self.isRTX = isRTX
        }
    }

    /// How many SSRCs a router learns and retires: a peer may send from any number of them, and
    /// the least recently seen goes first.
    public static let perConnectionSSRCs = 32

    private var entries: [Entry]
    /// Routes of the announced SSRCs (a few per receiving section, which the offer limits).
    private var announced: [UInt32: Route] = [:]
    /// Routes learned from packets, bounded.
    private var learned = BoundedMap<UInt32, Route>(capacity: perConnectionSSRCs)
    /// Streams of sections that stopped receiving (see `following`), bounded.
    private var retired = BoundedMap<UInt32, Bool>(capacity: perConnectionSSRCs)
    /// The `sdes:mid` extension id of the bundle (the same in every section JSEP writes).
    public let midExtensionID: UInt8?

    public init(entries: [Entry], midExtensionID: UInt8?) {
        self.entries = entries
        self.midExtensionID = midExtensionID
        for entry in entries {
            if let ssrc = entry.ssrc { announced[ssrc] = Route(index: entry.index, isRTX: false) }
            if let rtx = entry.rtxSSRC { announced[rtx] = Route(index: entry.index, isRTX: true) }
        }
    }

    /// The SSRCs learned from packets (announced ones aside); at most `perConnectionSSRCs`.
    var learnedCount: Int { learned.count }

    private func known(_ ssrc: UInt32) -> Route? { announced[ssrc] ?? learned.peek(ssrc) }

    /// This router after a renegotiation, told what `previous` (the router of the last exchange)
    /// knew. A stream it routed (announced or learned) to a section that still receives with the
    /// same payload types, and announces no other SSRC, keeps its route; one of a section that no
    /// longer receives, or now announces another SSRC, is retired. Streams retired before stay so
    /// unless announced again.
    public func following(_ previous: RTPRouter?) -> RTPRouter {
        guard let previous else { return self }
        var next = self
        next.retired = previous.retired
        let previousRoutes =
            previous.announced.map { ($0.key, $0.value) } + previous.learned.entries.map { ($0.key, $0.value) }
        for (ssrc, route) in previousRoutes where next.known(ssrc) == nil {
            let was = previous.entries.first { $0.index == route.index }
            let now = entries.first { $0.index == route.index && $0.mid == was?.mid }
            let announced = route.isRTX ? now?.rtxSSRC : now?.ssrc
            if let now, announced == nil || announced == ssrc {
                if now.payloadType == was?.payloadType, now.rtxPayloadType == was?.rtxPayloadType {
                    next.learned.set(route, for: ssrc)
                }
            } else {
                next.retired.set(true, for: ssrc)
            }
        }
        for ssrc in next.retired.keys where next.known(ssrc) != nil { next.retired.removeValue(forKey: ssrc) }
        return next
    }

    /// The route for `packet`, or nil when it belongs to no receiving transceiver.
    public mutating func route(_ packet: RTPPacket) -> Route? {
        if let known = announced[packet.ssrc] ?? learned.value(for: packet.ssrc) { return known }
        var entry: Entry?
        if let id = midExtensionID, let mid = Self.mid(in: packet, id: id) {
            // A MID names its section: one that receives nothing now (a screen share that just
            // stopped, its last packets still arriving) is not a stream for another section.
            guard let named = entries.first(where: { $0.mid == mid }) else { return nil }
            entry = named
        } else if retired.value(for: packet.ssrc) != nil {
            // A stream of a section that stopped receiving, without a MID to say otherwise.
            return nil
        }
        if entry == nil {
            let matching = entries.filter {
                $0.payloadType == packet.payloadType || $0.rtxPayloadType == packet.payloadType
            }
            if matching.count == 1 { entry = matching[0] }
        }
        guard let entry else { return nil }
        let isRTX = entry.rtxPayloadType == packet.payloadType
        guard isRTX || entry.payloadType == packet.payloadType else { return nil }
        let route = Route(index: entry.index, isRTX: isRTX)
        learned.set(route, for: packet.ssrc)
        retired.removeValue(forKey: packet.ssrc)
        return route
    }

    private static func mid(in packet: RTPPacket, id: UInt8) -> String? {
        let map = HeaderExtensionMap([id: HeaderExtensionURI.mid])
        return (try? packet.headerExtensionValue(MediaIdentification.self, map: map))?.value
    }
}
