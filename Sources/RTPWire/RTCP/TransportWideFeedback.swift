import ShareCore

// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1 Transport-wide RTCP Feedback Message
// (PT=205 RTPFB, FMT=15)
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|  FMT=15 |    PT=205     |           length              |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                     SSRC of packet sender                     |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                      SSRC of media source                     |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |      base sequence number     |      packet status count      |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                 reference time                | fb pkt. count |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |          packet chunk         |         packet chunk          |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// .                                                               .
// |         packet chunk          |  recv delta   |  recv delta   |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// .                                                               .
// |           recv delta          |  recv delta   | zero padding  |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Reference time: 24-bit signed, in 64 ms units. Packet status symbols: 00 not received,
// 01 received with a small delta (1 byte, unsigned, 250 µs units), 10 received with a large or
// negative delta (2 bytes, signed, 250 µs units), 11 reserved. The first delta is relative to
// the reference time, each next one to the previous received packet.
//
// Run length chunk:                   Status vector chunk:
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |T| S |       Run Length        |   |T|S|       symbol list         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  T=0, S = the symbol repeated        T=1; S=0: 14 one-bit symbols (0 not received,
//                                      1 small delta); S=1: 7 two-bit symbols

/// Transport-wide congestion control feedback: for a run of transport-wide sequence numbers,
/// which packets arrived and when.
public struct TransportWideFeedback: Hashable, Sendable {
    public static let packetType = RTCPPacketType.transportFeedback
    public static let format = RTCPFeedbackFormat.transportWideFeedback
    /// One receive delta tick.
    public static let deltaTick = Duration.microseconds(250)
    /// One reference time tick.
    public static let referenceTimeTick = Duration.milliseconds(64)
    /// The 24-bit signed range of the reference time.
    public static let referenceTimeRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    /// What became of one packet.
    public enum PacketStatus: Hashable, Sendable {
        case notReceived
        /// Received, `delta` ticks of 250 µs after the previous received packet (or, for the
        /// first, after the reference time). Negative when packets arrived out of order.
        case received(delta: Int16)
    }

    /// One packet's result with times worked out.
    public struct PacketResult: Hashable, Sendable {
        public var sequenceNumber: UInt16
        /// Nil when the packet was not received.
        public var receiveDelta: Duration?
        /// Arrival time in the receiver's time base (reference time plus the deltas so far); nil
        /// when not received.
        public var arrivalTime: Duration?
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// The transport-wide sequence number of the first packet covered.
    public var baseSequenceNumber: UInt16
    /// Reference time in 64 ms units, 24-bit signed; wraps in the receiver's time base.
    public var referenceTime: Int32
    /// Counts feedback packets sent, mod 256, so the sender can spot lost feedback.
    public var feedbackPacketCount: UInt8
    /// One status per packet from `baseSequenceNumber` on; the packet status count is its size.
    public var statuses: [PacketStatus]

    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: Int32,
        feedbackPacketCount: UInt8, statuses: [PacketStatus]
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.statuses = statuses
    }

    /// Each packet's sequence number, delta and arrival time.
    public var packetResults: [PacketResult] {
        var time = Self.referenceTimeTick * Int(referenceTime)
        var results: [PacketResult] = []
        results.reserveCapacity(statuses.count)
        for (index, status) in statuses.enumerated() {
            let sequenceNumber = baseSequenceNumber &+ UInt16(truncatingIfNeeded: index)
            switch status {
            case .notReceived:
                results.append(PacketResult(sequenceNumber: sequenceNumber, receiveDelta: nil, arrivalTime: nil))
            case let .received(delta):
                let duration = Self.deltaTick * Int(delta)
                time += duration
                results.append(PacketResult(sequenceNumber: sequenceNumber, receiveDelta: duration, arrivalTime: time))
            }
        }
        return results
    }

    // MARK: Building from arrivals

    /// Feedback for packets that arrived at the given times (any time base; the receiver's
    /// clock). Arrivals may come in any order; sequence numbers are ordered allowing for
    /// wraparound (all must lie within 32767 of the first). Numbers between the lowest and
    /// highest that are absent are reported lost; repeats keep the first arrival.
    ///
    /// Throws when the list is empty or a delta between consecutive received packets (in
    /// sequence order) does not fit 16 signed bits of 250 µs (about ±8.19 s); the caller then
    /// splits the feedback.
    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, feedbackPacketCount: UInt8,
        arrivals: [(sequenceNumber: UInt16, arrivalTime: Duration)]
    ) throws(WireError) {
        guard let first = arrivals.first else {
            throw .invalid(what: "rtcp: transport feedback", reason: "no arrivals to report")
        }
        // Order by signed distance from the first number, so 65535 comes before 0.
        func offset(_ number: UInt16) -> Int { Int(Int16(bitPattern: number &- first.sequenceNumber)) }
        var byOffset: [Int: Duration] = [:]
        for arrival in arrivals where byOffset[offset(arrival.sequenceNumber)] == nil {
            byOffset[offset(arrival.sequenceNumber)] = arrival.arrivalTime
        }
        let lowest = byOffset.keys.min() ?? 0
        let highest = byOffset.keys.max() ?? 0
        let base = first.sequenceNumber &+ UInt16(truncatingIfNeeded: lowest)

        let firstTime = byOffset[lowest] ?? .zero
        let tickMicros: Int64 = 250
        let referenceMicros: Int64 = 64_000
        let firstMicros = Self.microseconds(firstTime)
        // Floor division: the reference time is at or before the first arrival.
        var referenceTicks = firstMicros / referenceMicros
        if firstMicros % referenceMicros < 0 { referenceTicks -= 1 }
        var previous = referenceTicks &* referenceMicros

        var statuses: [PacketStatus] = []
        statuses.reserveCapacity(highest - lowest + 1)
        for index in lowest...highest {
            guard let time = byOffset[index] else {
                statuses.append(.notReceived)
                continue
            }
            let elapsed = Self.microseconds(time) &- previous
            // Round to the nearest tick, halves away from zero.
            let ticks = (elapsed + (elapsed >= 0 ? tickMicros / 2 : -tickMicros / 2)) / tickMicros
            guard let delta = Int16(exactly: ticks) else {
                throw .invalid(
                    what: "rtcp: transport feedback",
                    reason:
                        "receive delta of \(elapsed) µs before packet \(base &+ UInt16(truncatingIfNeeded: index - lowest)) does not fit 16 bits"
                )
            }
            statuses.append(.received(delta: delta))
            previous &+= ticks &* tickMicros
        }
        // Keep the low 24 bits, sign-extended: the reference time wraps.
        let wrapped = Int32(truncatingIfNeeded: (referenceTicks << 40) >> 40)
        self.init(
            senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, baseSequenceNumber: base, referenceTime: wrapped,
            feedbackPacketCount: feedbackPacketCount, statuses: statuses)
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000
    }

    // MARK: Parsing

    /// Parses a buffer holding exactly one transport-wide feedback packet.
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> TransportWideFeedback {
        try parse(RTCPFrame.single(bytes, packetType: packetType, format: format, name: "transport feedback"))
    }

    /// Symbols on the wire.
    private enum Symbol: UInt8 {
        case notReceived = 0, smallDelta = 1, largeDelta = 2
    }

    static func parse(_ frame: RTCPFrame) throws(WireError) -> TransportWideFeedback {
        var reader = frame.bodyReader
        let ssrcs = try reader.readFeedbackSSRCs("rtcp: transport feedback")
        let base = try reader.readUInt16("rtcp: transport feedback base sequence number")
        let count = Int(try reader.readUInt16("rtcp: transport feedback packet status count"))
        let reference = try reader.readUInt24("rtcp: transport feedback reference time")
        let feedbackCount = try reader.readUInt8("rtcp: transport feedback packet count")

        var symbols: [Symbol] = []
        symbols.reserveCapacity(count)
        while symbols.count < count {
            let chunk = try reader.readUInt16("rtcp: transport feedback packet chunk")
            let left = count - symbols.count
            if chunk & 0x8000 == 0 {
                // Run length chunk.
                let symbol = try Self.symbol(UInt8(truncatingIfNeeded: chunk >> 13) & 0x3)
                let run = Int(chunk & 0x1FFF)
                symbols.append(contentsOf: repeatElement(symbol, count: min(run, left)))
            } else if chunk & 0x4000 == 0 {
                // Status vector chunk, 14 one-bit symbols, most significant first.
                for bit in (0..<14).reversed().prefix(left) {
                    symbols.append(chunk & (1 << bit) != 0 ? .smallDelta : .notReceived)
                }
            } else {
                // Status vector chunk, 7 two-bit symbols, most significant first.
                for pair in (0..<7).reversed().prefix(left) {
                    symbols.append(try Self.symbol(UInt8(truncatingIfNeeded: chunk >> (pair * 2)) & 0x3))
                }
            }
        }

        var statuses: [PacketStatus] = []
        statuses.reserveCapacity(count)
        for symbol in symbols {
            switch symbol {
            case .notReceived:
                statuses.append(.notReceived)
            case .smallDelta:
                statuses.append(.received(delta: Int16(try reader.readUInt8("rtcp: transport feedback receive delta"))))
            case .largeDelta:
                let delta = try reader.readUInt16("rtcp: transport feedback receive delta")
                statuses.append(.received(delta: Int16(bitPattern: delta)))
            }
        }
        // Whatever follows the deltas is zero padding to the 32-bit boundary.
        return TransportWideFeedback(
            senderSSRC: ssrcs.sender, mediaSSRC: ssrcs.media, baseSequenceNumber: base,
            referenceTime: (Int32(bitPattern: reference << 8)) >> 8, feedbackPacketCount: feedbackCount,
            statuses: statuses)
    }

    private static func symbol(_ bits: UInt8) throws(WireError) -> Symbol {
        guard let symbol = Symbol(rawValue: bits) else {
            throw .invalid(what: "rtcp: transport feedback packet chunk", reason: "status symbol 3 is reserved")
        }
        return symbol
    }

    // MARK: Serializing

    /// The packet on the wire. Chunks are chosen greedily: a run of 7 or more equal symbols
    /// becomes a run length chunk; otherwise 14 one-bit symbols when none of them needs a large
    /// delta, else 7 two-bit symbols. The last chunk's unused symbols are zero, and the packet is
    /// zero-padded to 32 bits without the P bit. Throws for more than 65535 statuses.
    public func serialize() throws(WireError) -> [UInt8] {
        guard statuses.count <= Int(UInt16.max) else {
            throw .invalid(what: "rtcp: transport feedback", reason: "\(statuses.count) packets, at most 65535 fit")
        }
        let symbols: [Symbol] = statuses.map { status in
            switch status {
            case .notReceived: return .notReceived
            case let .received(delta): return (0...255).contains(delta) ? .smallDelta : .largeDelta
            }
        }
        return try makeRTCPPacket(count: Int(Self.format), packetType: Self.packetType, name: "transport feedback") {
            writer in
            writer.write(senderSSRC)
            writer.write(mediaSSRC)
            writer.write(baseSequenceNumber)
            writer.write(UInt16(statuses.count))
            writer.writeUInt24(UInt32(bitPattern: referenceTime) & 0xFF_FFFF)
            writer.write(feedbackPacketCount)
            for chunk in Self.chunks(for: symbols) { writer.write(chunk) }
            for status in statuses {
                guard case let .received(delta) = status else { continue }
                if (0...255).contains(delta) {
                    writer.write(UInt8(delta))
                } else {
                    writer.write(UInt16(bitPattern: delta))
                }
            }
        }
    }

    private static func chunks(for symbols: [Symbol]) -> [UInt16] {
        var chunks: [UInt16] = []
        var index = 0
        while index < symbols.count {
            let symbol = symbols[index]
            var run = 1
            while run < 0x1FFF, index + run < symbols.count, symbols[index + run] == symbol { run += 1 }
            if run >= 7 {
                chunks.append(UInt16(symbol.rawValue) << 13 | UInt16(run))
                index += run
                continue
            }
            let window = symbols[index..<min(index + 14, symbols.count)]
            if !window.contains(.largeDelta) {
                var chunk: UInt16 = 0x8000
                for (position, symbol) in window.enumerated() where symbol == .smallDelta {
                    chunk |= 1 << (13 - position)
                }
                chunks.append(chunk)
                index += 14
            } else {
                var chunk: UInt16 = 0xC000
                for (position, symbol) in window.prefix(7).enumerated() {
                    chunk |= UInt16(symbol.rawValue) << (12 - 2 * position)
                }
                chunks.append(chunk)
                index += 7
            }
        }
        return chunks
    }
}
