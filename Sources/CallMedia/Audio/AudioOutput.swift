import Dispatch
import ShareCore
import Synchronization

/// Where a process plays the decoded audio of a call: one PipeWire playback stream (48 kHz, S16,
/// stereo) into the default sink (or the node named with `configure`), opened when the first
/// remote participant's playout joins and closed when the last one leaves. Every participant is a
/// queue in one `AudioMixer`; the stream's process callback mixes them and wakes each playout
/// thread, which then refills its queue from its jitter buffer (playout runs at the stream's pace).
///
/// When there is no PipeWire daemon, or the stream is not linked to an output, playout threads keep
/// their own 20 ms clock and only count (`status` says which, and why).
public final class AudioOutput: Sendable {
    public static let shared = AudioOutput()
    public static let channels = 2

    /// A participant's place in the mix.
    public final class Member: Sendable {
        public let id: Int
        let wake = DispatchSemaphore(value: 0)
        init(id: Int) { self.id = id }
    }

    private struct State: Sendable {
        var stream: PipeWireAudioStream?
        var failure: String?
        var members: [Int: Member] = [:]
        var nextID = 0
        var target: String?
        var enabled = true
    }

    private let state = Locked(State())
    private let mixer = Locked(AudioMixer(channels: AudioOutput.channels))
    private let lastRequest = Atomic<Int>(0)

    public init() {}

    /// `target` nil: the default sink; `enabled` false: never open PipeWire (count only).
    /// Takes effect at the next open.
    public func configure(target: String?, enabled: Bool = true) {
        state.withLock { s in
            s.target = target
            s.enabled = enabled
        }
    }

    /// Joins the mix; opens the playback stream if this is the first member. Blocking (connects
    /// to PipeWire): call it from a playout thread, not an actor.
    public func join(logger: Logger) -> Member {
        let (member, open, target) = state.withLock { s -> (Member, Bool, String?) in
            let member = Member(id: s.nextID)
            s.nextID += 1
            s.members[member.id] = member
            return (member, s.members.count == 1 && s.stream == nil && s.enabled, s.target)
        }
        mixer.withLock { $0.add(member.id) }
        if open {
            do {
                // Through the echo canceller's sink when it runs: the playout is its echo reference.
                let stream = try PipeWireAudioStream(
                    direction: .playback, channels: Self.channels,
                    target: EchoCanceller.shared.playoutTarget(for: target, logger: logger),
                    name: "sharectl-call-playout", logger: logger,
                    filter: (EchoCanceller.shared.nodes.sink, EchoCanceller.shared.nodes.playback)
                ) { [self] out in
                    mix(into: out)
                }
                let surplus = state.withLock { s -> PipeWireAudioStream? in
                    guard !s.members.isEmpty else { return stream }
                    s.stream = stream
                    s.failure = nil
                    return nil
                }
                surplus?.stop()
            } catch {
                state.withLock { $0.failure = error.description }
                logger.info("audio: playout is counted only: \(error.description)")
            }
        }
        return member
    }

    /// Leaves the mix; the last member closes the playback stream.
    public func leave(_ member: Member) {
        let closing = state.withLock { s -> PipeWireAudioStream? in
            s.members[member.id] = nil
            guard s.members.isEmpty else { return nil }
            defer { s.stream = nil }
            return s.stream
        }
        mixer.withLock { $0.remove(member.id) }
        closing?.stop()
    }

    /// True when the playback stream is streaming: playout follows its pace.
    public var isLive: Bool { state.withLock { $0.stream }?.status.streaming ?? false }

    /// Sample frames a member keeps queued: the stream's last request and two 20 ms frames more, so
    /// a playout thread woken late (a busy machine) still has one quantum in hand.
    func queueTarget() -> Int { max(960, lastRequest.load(ordering: .relaxed)) + 2 * 960 }

    func queued(_ member: Member) -> Int { mixer.withLock { $0.queued(member.id) } }

    func push(_ member: Member, _ samples: [Int16]) { mixer.withLock { $0.push(member.id, samples) } }

    public var mixerCounters: AudioMixer.Counters { mixer.withLock { $0.counters } }

    /// `pipewire: NODE` when playing into an output, else `counted (no PipeWire output: WHY)`.
    public var status: String {
        let (stream, failure, enabled, target) = state.withLock { ($0.stream, $0.failure, $0.enabled, $0.target) }
        guard enabled else { return "counted (no PipeWire output: turned off)" }
        if let stream {
            let status = stream.status
            if status.streaming, let sink = status.filteredNode, status.peerNode == EchoCanceller.shared.nodes.sink {
                return "pipewire: \(sink) (through \(EchoCanceller.shared.nodes.sink))"
            }
            if status.streaming { return "pipewire: \(status.peerNode ?? "an unnamed node")" }
            if let error = status.error {
                return "counted (no PipeWire output: \(error)\(target.map { " for node \($0)" } ?? ""))"
            }
            return "counted (no PipeWire output: no audio sink linked)"
        }
        return "counted (no PipeWire output: \(failure ?? "no remote audio to play"))"
    }

    /// On PipeWire's thread: mixes every member's queue into the stream's buffer, then wakes the
    /// playout threads to refill.
    private func mix(into out: UnsafeMutableBufferPointer<Int16>) {
        lastRequest.store(out.count / Self.channels, ordering: .relaxed)
        let members = mixer.withLock { m -> Int in
            m.take(into: out)
            return m.participants
        }
        guard members > 0 else { return }
        for member in state.withLock({ Array($0.members.values) }) { member.wake.signal() }
    }
}
