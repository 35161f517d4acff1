/// What the video's packets cost the link beyond the encoders' output, taken off what the encoders
/// are given, in the manner of libwebrtc's per-packet overhead: each packet's RTP header and
/// extensions, SRTP's authentication tag, and the UDP and IPv4 headers. The estimate is what the link
/// carries in all, so an encoder given all of it sends that much payload and more on the wire: at
/// 1.5 Mbit/s in 1,200-byte packets, about 6 % more. Once a second the packets sent since the last
/// tick and their header bytes become a rate, smoothed like the repair's.
///
/// A value: the caller passes the video senders' running counts and the time.
public struct PacketOverhead: Sendable, Equatable {
    /// Per packet, outside what the RTP stream counts: IPv4 (20) and UDP (8) headers, and SRTP's
    /// tag (16 for AES-GCM; HMAC-SHA1-80 takes 10).
    public static let transportBytes = 20 + 8 + 16
    public static let smoothing = 0.3

    /// The smoothed overhead rate, bits per second.
    public private(set) var bitsPerSecond = 0.0
    private var lastPackets: Int?
    private var lastHeaderBytes = 0
    private var lastMicros: Int64 = 0

    public init() {}

    /// The video senders' totals at `nowMicros`: packets sent and their RTP header bytes (each
    /// packet's size less its payload).
    public mutating func update(packets: Int, headerBytes: Int, nowMicros: Int64) {
        defer { (lastPackets, lastHeaderBytes, lastMicros) = (packets, headerBytes, nowMicros) }
        guard let lastPackets, nowMicros > lastMicros, packets >= lastPackets, headerBytes >= lastHeaderBytes else {
            return
        }
        let bytes = (packets - lastPackets) * Self.transportBytes + (headerBytes - lastHeaderBytes)
        let rate = Double(bytes) * 8_000_000 / Double(nowMicros - lastMicros)
        bitsPerSecond += Self.smoothing * (rate - bitsPerSecond)
    }
}
