import ShareCore

/// What a codec's depayloader keeps of one frame while its packets arrive.
protocol FrameBuilder: Sendable {
    associatedtype Piece
    init()
    /// Adds one packet's worth of the frame. Returns why the frame can no longer be whole, if so.
    mutating func add(_ piece: Piece, isFirstPacket: Bool) -> String?
    /// Why the frame is not whole although no packet is missing (an unfinished fragment), or nil.
    var incompleteReason: String? { get }
    var byteCount: Int { get }
    func build() -> (bytes: [UInt8], isKeyframe: Bool)
}

/// The sequencing every video depayloader shares: packets arrive in sequence-number order (putting
/// them back in order is the jitter buffer's job), a frame is the run of packets with one timestamp
/// (and picture ID, where there is one) and ends at the marker bit, and a sequence gap spoils the
/// frame it falls in.
///
/// After a gap the next frame is kept only if its first packet proves it starts the frame (VP8's
/// S bit with partition 0, an H.264 access unit delimiter or SPS): otherwise the lost packets may
/// have been its beginning. Late and duplicate packets are ignored. A frame whose marker never
/// arrives is settled by the next frame's first packet.
struct FrameAssembler<Builder: FrameBuilder>: Sendable {
    private struct OpenFrame: Sendable {
        var timestamp: UInt32
        var pictureID: UInt16?
        var firstSequenceNumber: UInt16
        var lastSequenceNumber: UInt16
        var builder = Builder()
        var damage: DropReason?
    }

    /// A frame larger than this is dropped rather than grown without bound.
    let maximumFrameSize: Int
    private var lastSequenceNumber: UInt16?
    private var open: OpenFrame?

    init(maximumFrameSize: Int) { self.maximumFrameSize = maximumFrameSize }

    /// A packet at or shortly behind the newest sequence number seen.
    func isLateOrDuplicate(_ sequenceNumber: UInt16) -> Bool {
        guard let last = lastSequenceNumber else { return false }
        return SequenceOrder(sequenceNumber, after: last).isLateOrDuplicate
    }

    mutating func push(
        _ piece: Builder.Piece, sequenceNumber: UInt16, timestamp: UInt32, pictureID: UInt16?,
        marker: Bool, startsFrame: Bool
    ) -> [DepayloadEvent] {
        guard !isLateOrDuplicate(sequenceNumber) else { return [] }
        var events: [DepayloadEvent] = []
        // Nothing seen yet counts like a gap: whatever came before is unknown.
        var gap = lastSequenceNumber == nil
        if let last = lastSequenceNumber {
            switch SequenceOrder(sequenceNumber, after: last) {
            case let .ahead(missing) where missing > 0:
                gap = true
                events.append(.gap(after: last, missing: missing))
            case .restarted:
                // Numbering started afresh: whatever was open cannot be finished.
                gap = true
                if let current = open, let event = close(current, tailMayBeMissing: true) { events.append(event) }
                open = nil
            default:
                break
            }
        }
        lastSequenceNumber = sequenceNumber

        if let current = open, current.timestamp != timestamp || current.pictureID != pictureID {
            // The previous frame ended without its marker: whole only if nothing went missing.
            if let event = close(current, tailMayBeMissing: gap) { events.append(event) }
            open = nil
        }
        if open == nil {
            var frame = OpenFrame(
                timestamp: timestamp, pictureID: pictureID,
                firstSequenceNumber: sequenceNumber, lastSequenceNumber: sequenceNumber)
            if gap && !startsFrame { frame.damage = .missingPackets }
            if frame.damage == nil, let reason = frame.builder.add(piece, isFirstPacket: true) {
                frame.damage = .inconsistent(reason)
            }
            open = frame
        } else if var frame = open {
            open = nil  // keep the builder's storage uniquely referenced while it grows
            frame.lastSequenceNumber = sequenceNumber
            if gap { frame.damage = frame.damage ?? .missingPackets }
            if frame.damage == nil, let reason = frame.builder.add(piece, isFirstPacket: false) {
                frame.damage = .inconsistent(reason)
            }
            open = frame
        }
        if var frame = open, frame.damage == nil, frame.builder.byteCount > maximumFrameSize {
            frame.damage = .inconsistent("frame larger than \(maximumFrameSize) bytes")
            frame.builder = Builder()
            open = frame
        }
        if marker, let frame = open {
            open = nil
            if let event = close(frame, tailMayBeMissing: false) { events.append(event) }
        }
        return events
    }

    /// Settles a frame left open at the end of a stream: without its marker it cannot be known whole.
    mutating func finish() -> [DepayloadEvent] {
        guard let frame = open else { return [] }
        open = nil
        let reason = frame.damage ?? .missingPackets
        return [
            .dropped(
                DroppedFrame(
                    timestamp: frame.timestamp, firstSequenceNumber: frame.firstSequenceNumber,
                    reason: reason))
        ]
    }

    private func close(_ frame: OpenFrame, tailMayBeMissing: Bool) -> DepayloadEvent? {
        var damage = frame.damage
        if damage == nil && tailMayBeMissing { damage = .missingPackets }
        if damage == nil, let reason = frame.builder.incompleteReason { damage = .inconsistent(reason) }
        if let damage {
            return .dropped(
                DroppedFrame(
                    timestamp: frame.timestamp, firstSequenceNumber: frame.firstSequenceNumber,
                    reason: damage))
        }
        let built = frame.builder.build()
        return .frame(
            DepayloadedFrame(
                bytes: built.bytes, isKeyframe: built.isKeyframe, timestamp: frame.timestamp,
                firstSequenceNumber: frame.firstSequenceNumber,
                lastSequenceNumber: frame.lastSequenceNumber, pictureID: frame.pictureID))
    }
}

/// Where a packet's sequence number falls against the newest one seen.
enum SequenceOrder: Equatable {
    /// After it, with `missing` numbers skipped.
    case ahead(missing: Int)
    /// The same number again, or up to `lateLimit` behind: a late or duplicate packet.
    case lateOrDuplicate
    /// Further behind than any late packet: the sender has started numbering afresh.
    case restarted

    /// A packet this far behind is taken as a restart rather than as late (a jitter buffer holds
    /// far fewer packets than this).
    static let lateLimit: UInt16 = 1000

    init(_ sequenceNumber: UInt16, after last: UInt16) {
        let delta = sequenceNumber &- last
        if delta != 0 && delta < 0x8000 {
            self = .ahead(missing: Int(delta) - 1)
        } else if last &- sequenceNumber <= Self.lateLimit {
            self = .lateOrDuplicate
        } else {
            self = .restarted
        }
    }

    var isLateOrDuplicate: Bool { self == .lateOrDuplicate }
}

/// Splits `count` bytes into the fewest chunks of at most `maxChunk` bytes, as equal as they can be,
/// so a frame's last packet is not a runt.
func balancedChunks(count: Int, maxChunk: Int) -> [Range<Int>] {
    guard count > 0, maxChunk > 0 else { return [] }
    let chunks = (count + maxChunk - 1) / maxChunk
    let base = count / chunks
    let larger = count % chunks  // the first `larger` chunks carry one byte more
    var ranges: [Range<Int>] = []
    ranges.reserveCapacity(chunks)
    var start = 0
    for index in 0..<chunks {
        let size = base + (index < larger ? 1 : 0)
        ranges.append(start..<start + size)
        start += size
    }
    return ranges
}
