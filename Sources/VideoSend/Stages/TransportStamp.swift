import RTPWire
import Synchronization

/// Transport-wide sequence numbers (draft-holmer-rmcat-transport-wide-cc-extensions-01) are
/// counted across every stream of one transport, so the streams share one counter.
public final class TransportSequenceCounter: Sendable {
    private let next = Atomic<UInt16>(0)
    public init() {}
    public func take() -> UInt16 { next.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// The last send stage: stamps what belongs to the moment a packet leaves — MID (and a simulcast
/// layer's RID or repaired RID), abs-send-time
/// and the transport-wide sequence number — serializes it and writes the bytes (to SRTP and ICE).
/// The congestion controller hears of every packet with the time and size it left (the sent
/// rate), and its transport-wide number when it has one, since feedback is matched by send time —
/// also when the socket refused it (a full buffer, a firewall): the number is spent, the receiver
/// reports it missing, and that is loss.
public enum TransportStamp {
    public typealias Sent =
        @Sendable (
            _ transportSequence: UInt16?, _ size: Int, _ probeCluster: Int?, _ nowMicros: Int64
        ) -> Void

    public static func writer(
        sequence counter: TransportSequenceCounter?, sent: Sent? = nil,
        next: @escaping @Sendable ([UInt8]) -> Bool
    ) -> PacketWriter {
        { outgoing, nowMicros in
            var packet = outgoing.packet
            var elements: [HeaderExtensionElement] = []
            let ext = outgoing.extensions
            if let mid = ext.mid { elements.append(HeaderExtensionElement(id: mid.id, data: Array(mid.value.utf8))) }
            if let rid = ext.rid { elements.append(HeaderExtensionElement(id: rid.id, data: Array(rid.value.utf8))) }
            if let rid = ext.repairedRID {
                elements.append(HeaderExtensionElement(id: rid.id, data: Array(rid.value.utf8)))
            }
            if let id = ext.absSendTimeID {
                elements.append(
                    HeaderExtensionElement(
                        id: id, data: AbsSendTime(seconds: Double(nowMicros) / 1_000_000).extensionData))
            }
            var transportSequence: UInt16?
            if let id = ext.transportSequenceID, let counter {
                let number = counter.take()
                transportSequence = number
                elements.append(HeaderExtensionElement(id: id, data: TransportSequenceNumber(number).extensionData))
            }
            if !elements.isEmpty { try? packet.setHeaderExtensionElements(elements) }
            guard let bytes = try? packet.serialize() else { return false }
            let ok = next(bytes)
            sent?(transportSequence, bytes.count, outgoing.probeCluster, nowMicros)
            return ok
        }
    }
}
