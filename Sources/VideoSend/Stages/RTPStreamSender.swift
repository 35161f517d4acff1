import RTPWire
import ShareCore

/// The header extensions a stream stamps, by the ids the remote description gave them. A
/// simulcast layer's packets carry its RID (`rid`); its retransmissions carry it as the repaired
/// RID (`repairedRID`) instead (RFC 8852 §3).
public struct SendExtensions: Sendable, Hashable {
    public var mid: (id: UInt8, value: String)?
    public var absSendTimeID: UInt8?
    public var transportSequenceID: UInt8?
    public var rid: (id: UInt8, value: String)?
    public var repairedRID: (id: UInt8, value: String)?

    public init(
        mid: (id: UInt8, value: String)? = nil, absSendTimeID: UInt8? = nil, transportSequenceID: UInt8? = nil,
        rid: (id: UInt8, value: String)? = nil, repairedRID: (id: UInt8, value: String)? = nil
    ) {
        self.mid = mid
        self.absSendTimeID = absSendTimeID
        self.transportSequenceID = transportSequenceID
        self.rid = rid
        self.repairedRID = repairedRID
    }

    /// What a retransmission on the RTX stream stamps: the repaired RID in place of the RID.
    public var forRepair: SendExtensions {
        var repair = self
        repair.rid = nil
        return repair
    }

    /// What a media packet stamps: the RID, not the repaired RID.
    public var forMedia: SendExtensions {
        var media = self
        media.repairedRID = nil
        return media
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.mid?.id == b.mid?.id && a.mid?.value == b.mid?.value && a.absSendTimeID == b.absSendTimeID
            && a.transportSequenceID == b.transportSequenceID && a.rid?.id == b.rid?.id
            && a.rid?.value == b.rid?.value && a.repairedRID?.id == b.repairedRID?.id
            && a.repairedRID?.value == b.repairedRID?.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(mid?.id); hasher.combine(mid?.value); hasher.combine(absSendTimeID);
        hasher.combine(transportSequenceID); hasher.combine(rid?.value); hasher.combine(repairedRID?.value)
    }
}

/// One outgoing RTP stream: turns payload units into packets (sequence numbers, timestamp, SSRC),
/// keeps them for retransmission, hands them to the next stage, answers NACKs on the RTX stream,
/// and writes its sender reports. The stages compose in that order:
///
///     payload units → number → history → writer (pacer → transport stamp → SRTP and ICE)
///                                ↑ NACK → RTX wrap → writer (ahead of video in the pacer)
///
/// Counters count packets the writer accepted (a pacer queues them; it refuses only when full).
///
/// Safe from any thread: the media thread sends, the RTCP thread asks for retransmissions and
/// reports; each takes the lock briefly. No clock is read here: callers pass `nowMicros`.
public final class RTPStreamSender: Sendable {
    public struct Configuration: Sendable {
        public var ssrc: UInt32
        public var payloadType: UInt8
        public var clockRate: Int
        public var rtx: (ssrc: UInt32, payloadType: UInt8)?
        public var extensions: SendExtensions
        /// Whether packets are kept for NACK (video) or not (audio).
        public var keepsHistory: Bool

        public init(
            ssrc: UInt32, payloadType: UInt8, clockRate: Int, rtx: (ssrc: UInt32, payloadType: UInt8)? = nil,
            extensions: SendExtensions = SendExtensions(), keepsHistory: Bool = true
        ) {
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.clockRate = clockRate
            self.rtx = rtx
            self.extensions = extensions
            self.keepsHistory = keepsHistory
        }
    }

    public struct Counters: Sendable, Equatable {
        public var packetsSent = 0
        /// Frames (one `send` call each) whose every packet left.
        public var framesSent = 0
        /// Payload octets, as the sender report counts them.
        public var octetsSent = 0
        public var bytesSent = 0
        /// The media packets' RTP headers and extensions (their size less their payload).
        public var headerBytesSent = 0
        public var rtxPacketsSent = 0
        /// Retransmissions the writer refused (over the budget, or a full pacer).
        public var rtxRefused = 0
        public var sendFailures = 0
        public var nacksReceived = 0
        /// Padding-only packets made on the RTX stream (bandwidth probes), and their bytes.
        public var paddingPacketsSent = 0
        public var paddingBytesSent = 0
    }

    private struct State {
        var sequence: UInt16
        var rtxSequence: UInt16
        var counters = Counters()
        /// The last timestamp sent and the capture time it stands for, to place the SR's RTP time.
        var lastTimestamp: UInt32?
        var lastTimestampMicros: Int64 = 0
    }

    public let configuration: Configuration
    public let history: RetransmissionHistory
    private let writer: PacketWriter
    private let state: Locked<State>

    /// `writer` is the next send stage (a pacer, or the transport stamp directly).
    /// `firstSequence` and `firstRTXSequence` continue a stream an earlier sender of the same
    /// SSRCs left off (see `nextSequenceNumbers`): RFC 3550 numbers one SSRC's packets in one run,
    /// and SRTP refuses to protect a number it has already passed.
    public init(
        configuration: Configuration, firstSequence: UInt16 = .random(in: 0...0x7FFF),
        firstRTXSequence: UInt16 = .random(in: 0...0x7FFF), writer: @escaping PacketWriter
    ) {
        self.configuration = configuration
        self.writer = writer
        history = RetransmissionHistory()
        state = Locked(State(sequence: firstSequence, rtxSequence: firstRTXSequence))
    }

    /// When (monotonic µs) this stream last sent a media packet; nil before its first. Padding goes
    /// only on a stream that sends media: a receiver knows its SSRC, and a simulcast layer that is
    /// off, or has not begun, has none the receiver could tie its RTX stream to.
    public var lastMediaSentMicros: Int64? {
        state.withLock { $0.lastTimestamp == nil ? nil : $0.lastTimestampMicros }
    }

    /// The stream padding goes on: of the streams with RTX, the one that sent media last. Never a
    /// stream that has sent none, such as a simulcast layer that is off: its RTX stream repairs
    /// nothing the receiver has seen (Janus 1.1.2 files such padding under SSRC 0 as the top
    /// layer's), and libwebrtc, too, pads only on a stream that sends media.
    public static func paddingStream(among streams: [RTPStreamSender]) -> RTPStreamSender? {
        var best: (stream: RTPStreamSender, at: Int64)?
        for stream in streams where stream.configuration.rtx != nil {
            guard let at = stream.lastMediaSentMicros else { continue }
            if best.map({ at > $0.at }) ?? true { best = (stream, at) }
        }
        return best?.stream
    }

    /// The numbers the next packet and the next retransmission would carry.
    public var nextSequenceNumbers: (media: UInt16, rtx: UInt16) {
        state.withLock { ($0.sequence, $0.rtxSequence) }
    }

    /// Unpaced: packets are stamped and written to `output` (serialized RTP; SRTP and ICE) at once.
    public convenience init(
        configuration: Configuration, transportSequence: TransportSequenceCounter?,
        firstSequence: UInt16 = .random(in: 0...0x7FFF), output: @escaping @Sendable ([UInt8]) -> Bool
    ) {
        self.init(
            configuration: configuration, firstSequence: firstSequence,
            writer: TransportStamp.writer(sequence: transportSequence, next: output))
    }

    private var priority: Pacer<OutgoingPacket>.Priority { configuration.keepsHistory ? .video : .audio }

    /// Sends one frame's payload units with `timestamp` (the media clock), in order.
    @discardableResult
    public func send(_ units: [RTPPayloadUnit], timestamp: UInt32, nowMicros: Int64) -> Int {
        var sent = 0
        defer { if sent == units.count && sent > 0 { state.withLock { $0.counters.framesSent += 1 } } }
        for unit in units {
            let sequence = state.withLock { s -> UInt16 in
                defer { s.sequence &+= 1 }; return s.sequence
            }
            let packet = RTPPacket(
                marker: unit.marker, payloadType: configuration.payloadType, sequenceNumber: sequence,
                timestamp: timestamp, ssrc: configuration.ssrc, payload: unit.payload)
            if configuration.keepsHistory { history.store(packet, sentMicros: nowMicros) }
            let outgoing = OutgoingPacket(
                packet: packet, priority: priority, extensions: configuration.extensions.forMedia)
            let ok = writer(outgoing, nowMicros)
            state.withLock { s in
                if ok {
                    s.counters.packetsSent += 1
                    s.counters.octetsSent += unit.payload.count
                    s.counters.bytesSent += outgoing.size
                    s.counters.headerBytesSent += outgoing.size - unit.payload.count
                    sent += 1
                } else {
                    s.counters.sendFailures += 1
                }
                s.lastTimestamp = timestamp
                s.lastTimestampMicros = nowMicros
            }
        }
        return sent
    }

    /// Answers a generic NACK: each packet still held, and not resent within `rttMicros`, goes
    /// again on the RTX stream (or, with no RTX negotiated, as itself) if the writer takes it (the
    /// pacer keeps retransmissions inside a budget). Returns how many left.
    @discardableResult
    public func retransmit(_ sequenceNumbers: [UInt16], nowMicros: Int64, rttMicros: Int64? = nil) -> Int {
        state.withLock { $0.counters.nacksReceived += 1 }
        var sent = 0
        for original in history.packetsToResend(for: sequenceNumbers, now: nowMicros, rttMicros: rttMicros) {
            let packet: RTPPacket
            if let rtx = configuration.rtx {
                let rtxSequence = state.withLock { s -> UInt16 in
                    defer { s.rtxSequence &+= 1 }; return s.rtxSequence
                }
                packet = RTX.wrap(
                    original, rtxSSRC: rtx.ssrc, rtxPayloadType: rtx.payloadType, rtxSequenceNumber: rtxSequence)
            } else {
                packet = original
            }
            // On the RTX stream a layer's RID goes as the repaired RID; resent as itself, as the RID.
            var outgoing = OutgoingPacket(
                packet: packet, priority: .retransmission,
                extensions: configuration.rtx == nil
                    ? configuration.extensions.forMedia : configuration.extensions.forRepair)
            outgoing.repairOf = Int64(original.ssrc) << 16 | Int64(original.sequenceNumber)
            guard writer(outgoing, nowMicros) else {
                state.withLock { $0.counters.rtxRefused += 1 }
                continue
            }
            state.withLock {
                $0.counters.rtxPacketsSent += 1; $0.counters.bytesSent += outgoing.size
            }
            sent += 1
        }
        return sent
    }

    /// Padding-only packets on the RTX stream, about `bytes` in all, for the pacer to send now (a
    /// bandwidth probe): RTX numbering, the last media timestamp, no payload, the padding bit. A
    /// receiver counts them in the RTX stream's report and drops them (RFC 4588 §4: an RTX packet
    /// with no original header is padding). None without RTX: padding on the media stream would
    /// take the media's sequence numbers.
    ///
    /// The bytes are split evenly over as few packets as hold them, each with at least
    /// `minimumPadding` bytes of padding: Janus 1.1.2 takes the first two bytes after an RTX header,
    /// padding included, for the original sequence number and moves the rest back by two, with no
    /// check for a payload of one byte. Its move then ran past its receive buffer, its ICE failed a
    /// second later, and it died by SIGSEGV when it freed the connection (valgrind: an invalid write
    /// 65,534 bytes into libnice's 65,535-byte buffer, under janus_ice_cb_nice_recv).
    public func paddingPackets(bytes: Int) -> [OutgoingPacket] {
        guard let rtx = configuration.rtx, bytes > 0 else { return [] }
        let timestamp = state.withLock { $0.lastTimestamp ?? 0 }
        func packet(padding: Int) -> OutgoingPacket {
            let rtxSequence = state.withLock { s -> UInt16 in
                defer { s.rtxSequence &+= 1 }
                return s.rtxSequence
            }
            let packet = RTPPacket(
                marker: false, payloadType: rtx.payloadType, sequenceNumber: rtxSequence, timestamp: timestamp,
                ssrc: rtx.ssrc, payload: [], paddingSize: UInt8(padding))
            var outgoing = OutgoingPacket(
                packet: packet, priority: .retransmission, extensions: configuration.extensions.forRepair)
            outgoing.size += padding
            return outgoing
        }
        let overhead = OutgoingPacket(
            packet: RTPPacket(
                payloadType: rtx.payloadType, sequenceNumber: 0, timestamp: 0, ssrc: rtx.ssrc, payload: []),
            priority: .retransmission, extensions: configuration.extensions.forRepair
        ).size
        let count = (bytes + overhead + Self.maximumPadding - 1) / (overhead + Self.maximumPadding)
        let padding = min(Self.maximumPadding, max(Self.minimumPadding, (bytes + count - 1) / count - overhead))
        let packets = (0..<count).map { _ in packet(padding: padding) }
        let total = packets.reduce(0) { $0 + $1.size }
        state.withLock {
            $0.counters.paddingPacketsSent += packets.count
            $0.counters.paddingBytesSent += total
        }
        return packets
    }

    /// The most padding one packet carries (RFC 3550 §5.1: its last byte counts it).
    public static let maximumPadding = 255
    /// The least: well clear of Janus's one byte (see `paddingPackets(bytes:)`); a padding packet
    /// smaller than its header would mostly be header anyway.
    public static let minimumPadding = 32

    /// The sender report for this stream at `nowMicros` (monotonic) and `ntp` (wall clock), with
    /// the RTP time extrapolated from the last packet sent. Nil before the first packet.
    public func senderReport(nowMicros: Int64, ntp: NTPTimestamp) -> SenderReport? {
        state.withLock { s in
            guard let last = s.lastTimestamp else { return nil }
            let elapsed = max(0, nowMicros - s.lastTimestampMicros)
            let rtpNow = last &+ UInt32(truncatingIfNeeded: elapsed * Int64(configuration.clockRate) / 1_000_000)
            return SenderReport(
                ssrc: configuration.ssrc, ntpTimestamp: ntp, rtpTimestamp: rtpNow,
                packetCount: UInt32(truncatingIfNeeded: s.counters.packetsSent),
                octetCount: UInt32(truncatingIfNeeded: s.counters.octetsSent), reports: [])
        }
    }

    public var counters: Counters { state.withLock { $0.counters } }
}
