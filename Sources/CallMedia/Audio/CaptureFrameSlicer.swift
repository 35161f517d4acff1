/// Cuts captured audio (chunks of whatever size the capture delivers, each stamped with the time
/// its last sample ended) into the 20 ms frames Opus takes, each stamped with the time it ended.
///
/// Frames that ended before the first read are discarded (DESIGN.md "Audio": what was captured
/// before the sender began is stale, not late); past that, at most `capacity` frames wait and the
/// oldest goes first when more come. A pure value: the capture thread appends, the send thread
/// reads, both under one lock.
public struct CaptureFrameSlicer: Sendable {
    public struct Frame: Sendable, Equatable {
        /// Interleaved samples, `frameSamples × channels` of them.
        public var samples: [Int16]
        /// When the frame's last sample was captured.
        public var end: ContinuousClock.Instant

        public init(samples: [Int16], end: ContinuousClock.Instant) {
            self.samples = samples
            self.end = end
        }
    }

    public struct Counters: Sendable, Equatable {
        public var framesSliced = 0
        public var discardedBeforeFirstRead = 0
        public var droppedOverflow = 0
    }

    public let channels: Int
    public let sampleRate: Int
    public let frameSamples: Int
    public let capacity: Int
    private var pending: [Int16] = []
    private var ready: [Frame] = []
    private var firstRead: ContinuousClock.Instant?
    public private(set) var counters = Counters()

    public init(channels: Int = 1, sampleRate: Int = 48_000, frameSamples: Int = 960, capacity: Int = 25) {
        self.channels = channels
        self.sampleRate = sampleRate
        self.frameSamples = frameSamples
        self.capacity = capacity
    }

    /// Captured samples (interleaved) whose last one ended at `end`.
    public mutating func append(_ samples: UnsafeBufferPointer<Int16>, end: ContinuousClock.Instant) {
        pending.append(contentsOf: samples[0..<(samples.count - samples.count % channels)])
        let frameLength = frameSamples * channels
        var cut = 0
        while pending.count - cut >= frameLength {
            let after = (pending.count - cut - frameLength) / channels  // samples captured after this frame
            let frameEnd = end - .microseconds(Int64(after) * 1_000_000 / Int64(sampleRate))
            let frame = Frame(samples: Array(pending[cut..<(cut + frameLength)]), end: frameEnd)
            cut += frameLength
            counters.framesSliced += 1
            if let firstRead, frameEnd < firstRead {
                counters.discardedBeforeFirstRead += 1
                continue
            }
            ready.append(frame)
            if ready.count > capacity {
                ready.removeFirst()
                counters.droppedOverflow += 1
            }
        }
        pending.removeFirst(cut)
    }

    public mutating func append(_ samples: [Int16], end: ContinuousClock.Instant) {
        samples.withUnsafeBufferPointer { append($0, end: end) }
    }

    /// The oldest waiting frame, if any. The first read discards every frame that ended before it.
    public mutating func read(now: ContinuousClock.Instant) -> Frame? {
        if firstRead == nil {
            firstRead = now
            let stale = ready.prefix { $0.end < now }.count
            ready.removeFirst(stale)
            counters.discardedBeforeFirstRead += stale
        }
        return ready.isEmpty ? nil : ready.removeFirst()
    }

    public var waiting: Int { ready.count }
}
