/// What the video's packets cost the link beyond the encoders' output, taken off what the encoders
/// are given, in the manner of libwebrtc's per-packet overhead: each packet's RTP header and
/// extensions, SRTP's authentication tag, and the UDP and IPv4 headers. The estimate is what the link
/// carries in all, so an encoder given all of it sends that much payload and more on the wire: at
/// 1.5 Mbit/s in 1,200-byte packets, about 6 % more. Once a second the packets sent since the last
/// tick and their header bytes become a rate, smoothed like the repair's (the first taken whole).
///
/// A value: the caller passes the video senders' running counts and the time.
public struct PacketOverhead: Sendable, Equatable {
    /// Per packet, outside what the RTP stream counts: IPv4 (20) and UDP (8) headers, and SRTP's
    /// tag (16 for AES-GCM; HMAC-SHA1-80 takes 10).
    public static let transportBytes = 20 + 8 + 16
    public static let smoothing = 0.3

    /// The smoothed overhead rate, bits per second.
    public var bitsPerSecond: Double { headers.bitsPerSecond ?? 0 }
    /// The headers' bytes counted as a stream of their own.
    private var headers = WireRate()

    public init() {}

    /// The video senders' totals at `nowMicros`: packets sent and their RTP header bytes (each
    /// packet's size less its payload).
    public mutating func update(packets: Int, headerBytes: Int, nowMicros: Int64) {
        headers.update(packets: packets, bytes: headerBytes, nowMicros: nowMicros)
    }
}

/// What a stream sends on the wire, smoothed like `PacketOverhead`: its RTP packets' bytes and each
/// packet's transport bytes (`PacketOverhead.transportBytes`). The audio's, kept off the video's
/// targets: Opus at its 64 kbit/s default is about 96 kbit/s on the wire (50 packets a second with
/// their RTP, SRTP, UDP and IPv4 headers), more at `--audio-bitrate`, and a fixed reserve under that
/// gave the video what the link did not have (on the 600 kbit/s link a second of 626 kbit/s
/// against a 569 kbit/s estimate, the audio at 78 kbit/s of RTP where 40 was reserved).
///
/// A value: the caller passes the stream's running counts and the time. The first measurement is
/// taken whole; later ones are smoothed.
public struct WireRate: Sendable, Equatable {
    /// Bits per second; nil until two updates a moment apart.
    public private(set) var bitsPerSecond: Double?
    private var lastPackets: Int?
    private var lastBytes = 0
    private var lastMicros: Int64 = 0

    public init() {}

    public mutating func update(packets: Int, bytes: Int, nowMicros: Int64) {
        defer { (lastPackets, lastBytes, lastMicros) = (packets, bytes, nowMicros) }
        guard let lastPackets, nowMicros > lastMicros, packets >= lastPackets, bytes >= lastBytes else { return }
        let wire = (bytes - lastBytes) + (packets - lastPackets) * PacketOverhead.transportBytes
        let rate = Double(wire) * 8_000_000 / Double(nowMicros - lastMicros)
        bitsPerSecond = bitsPerSecond.map { $0 + PacketOverhead.smoothing * (rate - $0) } ?? rate
    }
}
