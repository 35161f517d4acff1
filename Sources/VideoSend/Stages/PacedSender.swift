import Foundation
import ShareCore
import Synchronization

/// The pacer's driver: its own thread releases what `Pacer` allows and writes it to the next
/// stage (the transport stamp) at the moment it leaves. `write` is the stage the stream senders
/// write into; it only queues. The thread sleeps until a packet is due (at most 2 ms while packets
/// wait) or one arrives.
public final class PacedSender: Sendable {
    public struct Snapshot: Sendable, Equatable {
        public var counters: Pacer<OutgoingPacket>.Counters
        public var queuedPackets: Int
        public var queuedBytes: Int
        public var queueDelayMillis: Double
        public var pacingBitrate: Int
        /// Packets the next stage (the transport) did not send.
        public var sendFailures: Int
    }

    private let pacer: Locked<Pacer<OutgoingPacket>>
    private let next: PacketWriter
    private let clock: @Sendable () -> Int64
    private let wake = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let failures = Atomic<Int>(0)

    public init(
        targetBitrate: Int, configuration: Pacer<OutgoingPacket>.Configuration = .init(),
        clock: @escaping @Sendable () -> Int64 = Clocks.monotonicMicros, next: @escaping PacketWriter
    ) {
        pacer = Locked(Pacer(targetBitrate: targetBitrate, configuration: configuration))
        self.next = next
        self.clock = clock
    }

    /// The stage: queue one packet (the thread sends it).
    public func write(_ packet: OutgoingPacket, nowMicros: Int64) -> Bool {
        let (accepted, wasEmpty) = pacer.withLock { p in
            let empty = p.queuedPackets == 0
            return (p.enqueue(packet, size: packet.size, priority: packet.priority, nowMicros: nowMicros), empty)
        }
        // The thread sleeps long only on an empty queue; otherwise it looks again within 2 ms.
        if accepted, wasEmpty { wake.signal() }
        return accepted
    }

    public func setTargetBitrate(_ bitsPerSecond: Int) { pacer.withLock { $0.setTargetBitrate(bitsPerSecond) } }

    public func snapshot() -> Snapshot {
        let now = clock()
        let failed = failures.load(ordering: .relaxed)
        return pacer.withLock { p in
            Snapshot(
                counters: p.counters, queuedPackets: p.queuedPackets, queuedBytes: p.queuedByteCount,
                queueDelayMillis: Double(p.queueDelayMicros(nowMicros: now)) / 1000,
                pacingBitrate: Int(p.pacingBitrate(nowMicros: now)), sendFailures: failed)
        }
    }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "pacer"
        thread.start()
    }

    /// Stops the thread and waits for it; what still waits is dropped.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        finished.wait()
    }

    private func run() {
        while running.load(ordering: .acquiring) {
            let now = clock()
            let (packets, wait) = pacer.withLock { p in
                (p.release(nowMicros: now), p.microsUntilNextRelease(nowMicros: now))
            }
            for packet in packets where !next(packet, clock()) { failures.add(1, ordering: .relaxed) }
            if let wait {
                if wait > 0 { _ = wake.wait(timeout: .now() + .microseconds(Int(min(wait, 2_000)))) }
            } else {
                _ = wake.wait(timeout: .now() + .milliseconds(100))
            }
        }
        finished.signal()
    }
}
