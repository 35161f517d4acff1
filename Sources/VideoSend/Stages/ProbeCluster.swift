/// One bandwidth probe cluster: for a moment the pacer sends at `bitrate` — the queued media
/// first, topped up with padding — until `bytes` have left, and every packet of it carries `id` to
/// the transport stamp, so the estimate can tell the cluster's packets in the feedback.
public struct ProbeCluster: Sendable, Equatable {
    public var id: Int
    public var bitrate: Int
    public var bytes: Int

    public init(id: Int, bitrate: Int, bytes: Int) {
        self.id = id
        self.bitrate = bitrate
        self.bytes = bytes
    }
}
