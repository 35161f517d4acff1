import CallsClient
import Foundation
import RTPWire
import ShareCore
import TestSupport
import Testing
import VideoSend
@testable import CallMedia

/// The pure parts of call audio through PipeWire: the playout mixer, cutting captured audio into
/// 20 ms frames, the send deadline and the silent-microphone verdict (on a manual clock: `t(ms)`).
@Suite struct CallAudioTests {
    let t = Timeline()

    @Test func mixerAddsParticipantsAndClips() {
        var mixer = AudioMixer(channels: 2)
        mixer.add(1)
        mixer.add(2)
        mixer.push(1, [1000, -1000, 30000, -30000, 7, 7])
        mixer.push(2, [500, 500, 10000, -10000, 0, 0])
        #expect(mixer.take(frames: 3) == [1500, -500, 32767, -32768, 7, 7])
        #expect(mixer.counters.shortReads == 0 && mixer.counters.framesMixed == 3)
    }

    @Test func mixerFillsShortQueuesWithSilenceAndCountsThem() {
        var mixer = AudioMixer(channels: 2)
        mixer.add(1)
        mixer.add(2)
        mixer.push(1, [100, 100, 200, 200])
        mixer.push(2, [1, 1])
        #expect(mixer.take(frames: 3) == [101, 101, 200, 200, 0, 0])
        #expect(mixer.counters.shortReads == 2)
        #expect(mixer.queued(1) == 0 && mixer.queued(2) == 0)
        mixer.remove(2)
        mixer.push(2, [5, 5])  // gone: ignored
        #expect(mixer.participants == 1 && mixer.queued(2) == 0)
    }

    @Test func mixerKeepsWhatAQuantumDidNotTake() {
        // 20 ms frames in, 1024-sample quanta out: nothing is lost or repeated between them.
        var mixer = AudioMixer(channels: 1)
        mixer.add(0)
        var next: Int16 = 0
        var out: [Int16] = []
        for _ in 0..<4 {
            while mixer.queued(0) < 1024 {
                mixer.push(
                    0,
                    (0..<960).map { _ in
                        defer { next &+= 1 }; return next
                    })
            }
            out += mixer.take(frames: 1024)
        }
        #expect(out == (0..<4096).map { Int16($0) })
    }

    @Test func slicerCutsTwentyMillisecondFramesStampedWithTheirEnd() {
        var slicer = CaptureFrameSlicer(channels: 1)
        #expect(slicer.read(now: t(0)) == nil, "the first read comes before any capture")
        // 256-sample chunks (5.33 ms each), the last sample of chunk k captured at (k+1) × 256/48 ms.
        var frames: [CaptureFrameSlicer.Frame] = []
        for k in 0..<14 {
            let chunk = (0..<256).map { Int16(truncatingIfNeeded: k * 256 + $0) }
            slicer.append(chunk, end: t.start + .microseconds(Int64(k + 1) * 256 * 1_000_000 / 48_000))
            while let frame = slicer.read(now: t(100)) { frames.append(frame) }
        }
        #expect(frames.count == 3)  // 3584 samples: 704 wait for a fourth frame
        #expect(frames.map(\.samples.first) == [0, 960, 1920])
        #expect(frames.allSatisfy { $0.samples.count == 960 })
        #expect(frames[0].end == t(20) && frames[1].end == t(40) && frames[2].end == t(60))
    }

    @Test func framesThatEndedBeforeTheFirstReadAreDiscarded() {
        var slicer = CaptureFrameSlicer(channels: 1)
        slicer.append([Int16](repeating: 1, count: 960 * 3), end: t(60))  // frames ending at 20, 40, 60 ms
        let first = slicer.read(now: t(45))
        #expect(first?.end == t(60), "the frames that ended at 20 and 40 ms are stale")
        #expect(slicer.counters.discardedBeforeFirstRead == 2)
        slicer.append([Int16](repeating: 2, count: 960), end: t(80))
        #expect(
            slicer.read(now: t(200))?.samples.first == 2,
            "after the first read, old frames are only late, not discarded")
        #expect(slicer.counters.discardedBeforeFirstRead == 2)
    }

    @Test func slicerKeepsAtMostItsCapacity() {
        var slicer = CaptureFrameSlicer(channels: 2, capacity: 3)
        _ = slicer.read(now: t(0))
        for k in 1...5 { slicer.append([Int16](repeating: Int16(k), count: 960 * 2), end: t(20 * k)) }
        #expect(slicer.waiting == 3 && slicer.counters.droppedOverflow == 2)
        #expect(slicer.read(now: t(100))?.samples.first == 3, "the oldest went first")
    }

    @Test func aFrameMoreThanOneHundredMillisecondsOldMissesItsDeadline() {
        #expect(!AudioSendThread.missedDeadline(end: t(0), now: t(100)))
        #expect(AudioSendThread.missedDeadline(end: t(0), now: t(101)))
        #expect(!AudioSendThread.missedDeadline(end: t(50), now: t(20)), "a frame from the future is not late")
    }

    @Test func fiveSecondsUnderMinusNinetyDbfsIsASilentMicrophone() {
        var monitor = SilenceMonitor()
        var changes: [(Int, SilenceMonitor.Change)] = []
        // "qqq…" quiet frames every 20 ms for 6 s, then one loud frame, then quiet again.
        for ms in stride(from: 0, through: 6000, by: 20) {
            if let change = monitor.sent(levelDbfs: AudioLevel.silence, now: t(ms)) { changes.append((ms, change)) }
        }
        if let change = monitor.sent(levelDbfs: -30, now: t(6020)) { changes.append((6020, change)) }
        for ms in stride(from: 6040, through: 9000, by: 20) {
            if let change = monitor.sent(levelDbfs: -95, now: t(ms)) { changes.append((ms, change)) }
        }
        #expect(changes.map(\.0) == [5000, 6020])
        #expect(changes.map(\.1) == [.becameSilent, .heardAgain])
        #expect(!monitor.isSilent, "3 s of quiet after sound is not yet silent")
    }

    @Test func quietButAboveTheThresholdIsNotSilent() {
        var monitor = SilenceMonitor()
        for ms in stride(from: 0, through: 10_000, by: 20) { _ = monitor.sent(levelDbfs: -89, now: t(ms)) }
        #expect(!monitor.isSilent)
    }

    @Test func audioSourceArguments() {
        #expect(CallSession.AudioSource(argument: "synthetic") == .synthetic)
        #expect(CallSession.AudioSource(argument: "silence") == .silence)
        #expect(CallSession.AudioSource(argument: "none") == CallSession.AudioSource.none)
        #expect(CallSession.AudioSource(argument: "mic") == .microphone(node: nil))
        #expect(CallSession.AudioSource(argument: "mic:alsa_input.usb-Mic") == .microphone(node: "alsa_input.usb-Mic"))
        #expect(CallSession.AudioSource(argument: "mic:") == nil)
        #expect(CallSession.AudioSource(argument: "tone") == nil)
        #expect(CallSession.AudioSource.microphone(node: "x").argument == "mic:x")
    }

    @Test func syntheticSourceFramesEndTwentyMillisecondsApart() {
        let source = SyntheticAudioSource(levelDbfs: -20)
        let frames = (0..<3).compactMap { _ in source.nextFrame() }
        #expect(frames.count == 3)
        #expect(
            frames[1].end - frames[0].end == .milliseconds(20) && frames[2].end - frames[1].end == .milliseconds(20))
        #expect(frames.allSatisfy { $0.samples.count == 960 * 2 })
        #expect(AudioLevel.peakDbfs(frames[1].samples) > -21)
    }

    @Test func aTurnedOffOutputSaysItCounts() throws {
        let output = AudioOutput()
        output.configure(target: nil, enabled: false)
        let member = output.join(logger: Logger(label: "test", level: .error))
        #expect(!output.isLive)
        #expect(output.status == "counted (no PipeWire output: turned off)")
        output.leave(member)
    }
}

/// A scripted frame source: each entry says how old the frame is when the send thread takes it
/// (stale frames stand for a send thread that fell behind). Then no more frames.
private final class ScriptedAudioSource: AudioFrameSource {
    let channels = 1
    let description = "scripted"
    private let script: Locked<[Duration]>
    private let level: Int16
    private let square: Bool
    /// `square`: a 1 kHz square wave of that peak (Opus takes out a constant level).
    init(ages: [Duration], level: Int16, square: Bool = false) {
        script = Locked(ages)
        self.level = level
        self.square = square
    }
    func start() {}
    func stop() {}
    func nextFrame() -> CaptureFrameSlicer.Frame? {
        guard let age = script.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Thread.sleep(forTimeInterval: 0.01)
            return nil
        }
        let samples = (0..<960).map { index in square && (index / 24) % 2 == 1 ? -level : level }
        return .init(samples: samples, end: .now - age)
    }
    var done: Bool { script.withLock { $0.isEmpty } }
}

/// An Opus stream sender whose packets are kept, parsed, in the order sent.
func capturingAudioSender(ssrc: UInt32) -> (RTPStreamSender, Locked<[RTPPacket]>) {
    let sent = Locked<[RTPPacket]>([])
    let sender = RTPStreamSender(
        configuration: .init(ssrc: ssrc, payloadType: 111, clockRate: 48_000, keepsHistory: false),
        transportSequence: nil
    ) { bytes in
        if let packet = try? RTPPacket.parse(bytes) { sent.withLock { $0.append(packet) } }
        return true
    }
    return (sender, sent)
}

@Suite struct AudioSendThreadTests {
    @Test func framesPastTheirDeadlineAreDroppedAndTheirTimestampsSkipped() async throws {
        let (sender, sent) = capturingAudioSender(ssrc: 7)
        let source = ScriptedAudioSource(
            ages: [.zero, .milliseconds(150), .milliseconds(500), .zero, .milliseconds(10)],
            level: 1000)
        let thread = AudioSendThread(sender: sender, source: source, logger: Logger(label: "test", level: .error))
        try thread.start()
        // A hang guard only: the expectations below judge.
        try? await until("five frames sent or dropped", within: .seconds(90)) {
            thread.snapshot.framesEncoded + thread.snapshot.framesDropped >= 5
        }
        thread.stop()
        let counters = thread.snapshot
        #expect(counters.framesDropped == 2 && counters.framesEncoded == 3)
        let packets = sent.withLock { $0 }
        #expect(packets.count == 3)
        if packets.count == 3 {
            #expect(packets[1].timestamp &- packets[0].timestamp == 3 * 960, "two dropped frames leave a 60 ms gap")
            #expect(packets[2].timestamp &- packets[1].timestamp == 960)
            #expect(packets[1].sequenceNumber &- packets[0].sequenceNumber == 1)
        }
        #expect(counters.levelDbfs > -31 && counters.levelDbfs < -29, "1000 of 32768 is −30.3 dBFS")
        #expect(!counters.silent)
    }

    /// Sends `frames` frames of a −10 dBFS capture through a send thread with the switch as given;
    /// returns its counters and the loudest frame a receiver decodes of what it sent.
    func send(frames: Int, muted: Bool) async throws -> (AudioSendThread.Counters, packets: Int, decodedDbfs: Double) {
        let (sender, sent) = capturingAudioSender(ssrc: 9)
        let mute = AudioMute()
        mute.set(muted)
        let source = ScriptedAudioSource(ages: Array(repeating: .zero, count: frames), level: 10_362, square: true)
        let thread = AudioSendThread(
            sender: sender, source: source, logger: Logger(label: "test", level: .error), mute: mute)
        try thread.start()
        // A hang guard only: the expectations judge.
        try? await until("the frames sent", within: .seconds(90)) { thread.snapshot.framesEncoded >= frames }
        thread.stop()
        let decoder = try OpusAudioDecoder(channels: 1)
        var loudest = AudioLevel.silence
        // The first frames carry the encoder's start; judge the settled ones.
        for packet in sent.withLock({ $0 }).dropFirst(5) {
            loudest = max(loudest, AudioLevel.peakDbfs(try decoder.decode(packet.payload)))
        }
        return (thread.snapshot, sent.withLock { $0.count }, loudest)
    }

    @Test func mutedTheStreamGoesOnWithDigitalSilenceAndTheMeterStillReadsTheMicrophone() async throws {
        let muted = try await send(frames: 20, muted: true)
        #expect(muted.packets == 20, "a packet every 20 ms, muted or not")
        #expect(muted.decodedDbfs < -90, "the receiver decodes silence: \(muted.decodedDbfs) dBFS")
        #expect(muted.0.muted)
        #expect(muted.0.levelDbfs > -11 && muted.0.levelDbfs < -9, "the meter reads the capture: \(muted.0.levelDbfs)")
        #expect(!muted.0.silent && !muted.0.speaking)

        let open = try await send(frames: 20, muted: false)
        #expect(open.packets == 20)
        #expect(open.decodedDbfs > -16, "unmuted, the capture goes: \(open.decodedDbfs) dBFS")
        #expect(!open.0.muted)
    }
}
