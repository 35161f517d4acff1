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
    /// Makes padding packets of about the bytes asked (a stream's RTX padding); none: no padding.
    private let paddingSource = Locked<(@Sendable (Int) -> [OutgoingPacket])?>(nil)
    /// Makes the padding of probe clusters (kept apart: a bandwidth probe's padding stops and
    /// starts on its own).
    private let clusterSource = Locked<(@Sendable (Int) -> [OutgoingPacket])?>(nil)

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
            let accepted = p.enqueue(
                packet, size: packet.size, priority: packet.priority, nowMicros: nowMicros, repair: packet.repairOf)
            return (accepted, empty)
        }
        // The thread sleeps long only on an empty queue; otherwise it looks again within 2 ms.
        if accepted, wasEmpty { wake.signal() }
        return accepted
    }

    public func setTargetBitrate(_ bitsPerSecond: Int) { pacer.withLock { $0.setTargetBitrate(bitsPerSecond) } }

    /// Retransmissions over the budget wait for it this long (`Pacer.setRepairWait`).
    public func setRepairWait(_ micros: Int64) { pacer.withLock { $0.setRepairWait(micros) } }

    /// Tops the link up to `bitsPerSecond` with padding from `source` while nothing waits (a
    /// bandwidth probe); 0 or no source stops it.
    public func setPadding(bitsPerSecond: Int, source: (@Sendable (Int) -> [OutgoingPacket])?) {
        paddingSource.withLock { $0 = source }
        pacer.withLock { $0.setPaddingBitrate(source == nil ? 0 : bitsPerSecond) }
        if bitsPerSecond > 0 { wake.signal() }
    }

    /// Sends probe clusters, topped up with padding from `source`, after any still running.
    public func startProbeClusters(_ clusters: [ProbeCluster], source: @escaping @Sendable (Int) -> [OutgoingPacket]) {
        guard !clusters.isEmpty else { return }
        clusterSource.withLock { $0 = source }
        pacer.withLock { $0.startProbeClusters(clusters) }
        wake.signal()
    }

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
            let (packets, wait, padding) = pacer.withLock { p in
                let released = p.releaseTagged(nowMicros: now)
                return (released, p.microsUntilNextRelease(nowMicros: now), p.paddingDueTagged(nowMicros: now))
            }
            for (packet, cluster) in packets {
                var packet = packet
                packet.probeCluster = cluster
                if !next(packet, clock()) { failures.add(1, ordering: .relaxed) }
            }
            let source = padding.cluster == nil ? paddingSource.withLock({ $0 }) : clusterSource.withLock({ $0 })
            if padding.bytes > 0, let source {
                for var packet in source(padding.bytes) {
                    packet.probeCluster = padding.cluster
                    if !next(packet, clock()) { failures.add(1, ordering: .relaxed) }
                }
            }
            if let wait {
                if wait > 0 { _ = wake.wait(timeout: .now() + .microseconds(Int(min(wait, 2_000)))) }
            } else if pacer.withLock({ $0.paddingBitrate > 0 || $0.activeCluster != nil }) {
                _ = wake.wait(timeout: .now() + .milliseconds(2))
            } else {
                _ = wake.wait(timeout: .now() + .milliseconds(100))
            }
        }
        finished.signal()
    }
}
