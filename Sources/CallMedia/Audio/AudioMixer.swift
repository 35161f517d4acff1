/// Mixes the decoded audio of several remote participants into the one playback stream: each
/// participant has a queue of interleaved samples (filled 20 ms at a time by its playout thread);
/// the output takes what it needs from every queue at once, adds the samples up and clips to
/// 16 bits. A queue that holds less than asked for gives what it has (the rest is silence) and
/// counts a short read.
///
/// A pure value: the PipeWire playback stream calls `take` on its thread under the output's lock.
public struct AudioMixer: Sendable {
    public struct Counters: Sendable, Equatable {
        /// Sample frames (per channel) handed to the output.
        public var framesMixed = 0
        /// Times a participant's queue held less than the output asked for.
        public var shortReads = 0
    }

    public let channels: Int
    private var queues: [Int: [Int16]] = [:]
    public private(set) var counters = Counters()

    public init(channels: Int = 2) { self.channels = channels }

    public var participants: Int { queues.count }

    public mutating func add(_ id: Int) { if queues[id] == nil { queues[id] = [] } }
    public mutating func remove(_ id: Int) { queues[id] = nil }

    /// Sample frames (per channel) waiting in one participant's queue.
    public func queued(_ id: Int) -> Int { (queues[id]?.count ?? 0) / channels }

    /// One participant's next samples (interleaved, `channels` per frame).
    public mutating func push(_ id: Int, _ samples: [Int16]) {
        guard queues[id] != nil else { return }
        queues[id]!.append(contentsOf: samples)
    }

    /// Mixes `out.count / channels` sample frames into `out` (every participant's queue, summed and clipped).
    public mutating func take(into out: UnsafeMutableBufferPointer<Int16>) {
        let wanted = out.count - out.count % channels
        var sum = [Int32](repeating: 0, count: wanted)
        for id in queues.keys {
            let have = min(wanted, queues[id]!.count - queues[id]!.count % channels)
            if have < wanted { counters.shortReads += 1 }
            queues[id]!.withUnsafeBufferPointer { q in
                for i in 0..<have { sum[i] += Int32(q[i]) }
            }
            queues[id]!.removeFirst(have)
        }
        for i in 0..<wanted { out[i] = Int16(clamping: sum[i]) }
        for i in wanted..<out.count { out[i] = 0 }
        counters.framesMixed += wanted / channels
    }

    /// The same, into a new array (for tests and callers without a buffer of their own).
    public mutating func take(frames: Int) -> [Int16] {
        var out = [Int16](repeating: 0, count: frames * channels)
        out.withUnsafeMutableBufferPointer { take(into: $0) }
        return out
    }
}
