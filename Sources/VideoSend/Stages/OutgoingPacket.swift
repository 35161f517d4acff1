import RTPWire

/// One RTP packet on its way out, before the stamps that belong to the moment it leaves
/// (transport-wide sequence number, abs-send-time): the send stages pass these along.
public struct OutgoingPacket: Sendable {
    public var packet: RTPPacket
    public var priority: Pacer<OutgoingPacket>.Priority
    /// The extensions the stream stamps, by negotiated id.
    public var extensions: SendExtensions
    /// The serialized size, near enough for pacing (the transport stamps add a few bytes).
    public var size: Int
    /// The bandwidth probe cluster it leaves in (`ProbeCluster.id`), set by the pacer.
    public var probeCluster: Int?
    /// A retransmission: the packet it repairs (its SSRC and sequence number), so the pacer holds
    /// one copy of a repair that waits for its budget.
    public var repairOf: Int64?

    public init(packet: RTPPacket, priority: Pacer<OutgoingPacket>.Priority, extensions: SendExtensions) {
        self.packet = packet
        self.priority = priority
        self.extensions = extensions
        size = 12 + packet.payload.count + 24
    }
}

/// A send stage: takes a packet at `nowMicros`, says whether it was accepted (sent, or queued to
/// be sent). Stages wrap the next writer:
///
///     let transport = TransportStamp.writer(sequence: counter, sent: { … }) { srtpAndICE($0) }
///     let paced = PacedSender(next: transport, …)
///     let sender = RTPStreamSender(configuration: …, writer: paced.write)
public typealias PacketWriter = @Sendable (OutgoingPacket, _ nowMicros: Int64) -> Bool
