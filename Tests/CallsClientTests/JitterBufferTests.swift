import CallsClient
import TestSupport
import Testing
@testable import CallMedia

/// The receive jitter buffers on a manual clock: `t(ms)` is an instant that many milliseconds
/// after a fixed start; the playout clock pulls every 20 ms as it would.
@Suite struct JitterBufferTests {
    let t = Timeline()

    @Test func startsAtSixtyMillisecondsAndPlaysInOrder() {
        var buffer = AudioJitterBuffer<Int>()
        buffer.insert(sequence: 10, payload: 10, now: t(0))
        #expect(buffer.pull(now: t(0)) == .buffering)
        buffer.insert(sequence: 11, payload: 11, now: t(20))
        #expect(buffer.pull(now: t(20)) == .buffering)
        buffer.insert(sequence: 12, payload: 12, now: t(40))
        #expect(buffer.held == .milliseconds(60))
        #expect(buffer.pull(now: t(40)) == .frame(10), "60 ms held: playing starts")
        buffer.insert(sequence: 13, payload: 13, now: t(60))
        #expect(buffer.pull(now: t(60)) == .frame(11))
        #expect(buffer.pull(now: t(80)) == .frame(12))
        #expect(buffer.pull(now: t(100)) == .frame(13))
        #expect(buffer.counters.played == 4 && buffer.counters.underruns == 0)
    }

    @Test func reorderedPacketIsPlayedAndLateOneDropped() {
        var buffer = AudioJitterBuffer<Int>()
        for (sequence, ms) in [(1, 0), (3, 20), (2, 25), (4, 40)] {
            buffer.insert(sequence: UInt16(sequence), payload: sequence, now: t(ms))
        }
        var played: [Int] = []
        for tick in 0..<4 { if case .frame(let p) = buffer.pull(now: t(60 + tick * 20)) { played.append(p) } }
        #expect(played == [1, 2, 3, 4])
        buffer.insert(sequence: 2, payload: 2, now: t(140))
        #expect(buffer.counters.droppedLate == 1)
    }

    @Test func aTimestampGapOnContinuousNumberingIsSilenceNotLoss() {
        var buffer = AudioJitterBuffer<Int>()
        // 3 and 4 follow 1 and 2 in numbering, but 4 is three frames of time after 3 (two frames
        // the sender dropped at its deadline).
        for (s, ts) in [(1, 0), (2, 960), (3, 1920), (4, 1920 + 3 * 960), (5, 1920 + 4 * 960)] {
            buffer.insert(sequence: UInt16(s), timestamp: UInt32(ts), source: 7, payload: s, now: t(0))
        }
        var played: [String] = []
        for tick in 0..<7 {
            switch buffer.pull(now: t(20 * tick)) {
            case .frame(let p): played.append("\(p)")
            case .silence: played.append("s")
            case .conceal: played.append("c")
            case .buffering: played.append(".")
            }
        }
        #expect(played == ["1", "2", "3", "s", "s", "4", "5"])
        #expect(buffer.counters.silenceInserted == 2 && buffer.counters.concealed == 0)
    }

    @Test func aGapLongerThanASecondIsPlayedThrough() {
        var buffer = AudioJitterBuffer<Int>()
        for (s, ts) in [(1, 0), (2, 960), (3, 960 + 60 * 960), (4, 960 + 61 * 960)] {
            buffer.insert(sequence: UInt16(s), timestamp: UInt32(ts), payload: s, now: t(0))
        }
        var played: [Int] = []
        for tick in 0..<4 { if case .frame(let p) = buffer.pull(now: t(20 * tick)) { played.append(p) } }
        #expect(played == [1, 2, 3, 4] && buffer.counters.silenceInserted == 0)
    }

    @Test func anotherSourceOrARenumberedStreamStartsAfresh() {
        var buffer = AudioJitterBuffer<Int>()
        for s in 100..<104 {
            buffer.insert(sequence: UInt16(s), timestamp: UInt32(s * 960), source: 1, payload: s, now: t(0))
        }
        #expect(buffer.pull(now: t(0)) == .frame(100))
        // The sender started again: a new SSRC numbering from 0.
        for s in 0..<3 {
            buffer.insert(sequence: UInt16(s), timestamp: UInt32(s * 960), source: 2, payload: 1000 + s, now: t(20))
        }
        #expect(buffer.counters.epochs == 1)
        #expect(buffer.pull(now: t(20)) == .frame(1000), "the old audio is gone, the new plays from its start")
        // The same SSRC renumbered far away (a restart of its numbering).
        for s in 40_000..<40_003 { buffer.insert(sequence: UInt16(s), payload: s, now: t(40)) }
        #expect(buffer.counters.epochs == 2)
        #expect(buffer.pull(now: t(40)) == .frame(40_000))
        #expect(buffer.counters.droppedLate == 0 && buffer.counters.concealed == 0)
        #expect(buffer.counters.droppedEpoch == 3 + 2, "what each old stream still held is counted as dropped")
    }

    @Test func gapWaitsTwentyMillisecondsThenConceals() {
        var buffer = AudioJitterBuffer<Int>()
        for s in 1...3 { buffer.insert(sequence: UInt16(s), payload: s, now: t(s * 20)) }
        #expect(buffer.pull(now: t(60)) == .frame(1))
        // 4 is lost; 5 arrives at 75 ms, 6 at 95 ms.
        buffer.insert(sequence: 5, payload: 5, now: t(75))
        #expect(buffer.pull(now: t(80)) == .frame(2))
        #expect(buffer.pull(now: t(85)) == .frame(3))
        #expect(buffer.pull(now: t(90)) == .buffering, "4 is missing; 5 came only 15 ms ago: wait")
        #expect(buffer.pull(now: t(100)) == .conceal, "waited 20 ms: conceal 4")
        #expect(buffer.pull(now: t(120)) == .frame(5))
        #expect(buffer.counters.concealed == 1)
    }

    @Test func twoUnderrunsInTenSecondsRaiseTheDelayAndThirtyCleanSecondsLowerIt() {
        var buffer = AudioJitterBuffer<Int>()
        var sequence: UInt16 = 0
        var now = 0
        func feed(_ n: Int) {
            for _ in 0..<n { buffer.insert(sequence: sequence, payload: Int(sequence), now: t(now)); sequence &+= 1 }
        }
        feed(3)
        for _ in 0..<4 { _ = buffer.pull(now: t(now)); now += 20 }  // plays 3, then runs dry
        #expect(buffer.counters.underruns == 1 && buffer.target == .milliseconds(60))
        now += 2000
        feed(3)
        for _ in 0..<4 { _ = buffer.pull(now: t(now)); now += 20 }
        #expect(buffer.counters.underruns == 2)
        #expect(buffer.target == .milliseconds(120), "two underruns within 10 s")
        feed(5)
        #expect(buffer.pull(now: t(now)) == .buffering, "100 ms held is under the raised target")
        feed(1)
        if case .frame = buffer.pull(now: t(now + 20)) {} else { Issue.record("120 ms held: plays") }
        // Steady feeding for 30 s: no underrun, then back to 60 ms.
        now += 40
        for _ in 0..<1510 { feed(1); _ = buffer.pull(now: t(now)); now += 20 }
        #expect(buffer.counters.underruns == 2)
        #expect(buffer.target == .milliseconds(60), "30 clean seconds")
    }

    @Test func underrunsFarApartDoNotRaiseTheDelay() {
        var buffer = AudioJitterBuffer<Int>()
        var sequence: UInt16 = 0
        for round in 0..<3 {
            let base = round * 11_000
            for i in 0..<3 { buffer.insert(sequence: sequence, payload: 0, now: t(base + i)); sequence &+= 1 }
            for tick in 0..<4 { _ = buffer.pull(now: t(base + tick * 20)) }
        }
        #expect(buffer.counters.underruns == 3 && buffer.target == .milliseconds(60))
    }

    @Test func overflowDropsTheOldestTwentyMilliseconds() {
        var buffer = AudioJitterBuffer<Int>()
        for s in 0..<8 { buffer.insert(sequence: UInt16(s), payload: s, now: t(0)) }
        #expect(buffer.held == .milliseconds(160) && buffer.counters.droppedOverflow == 0, "60 ms target + 100 ms")
        buffer.insert(sequence: 8, payload: 8, now: t(0))
        #expect(buffer.counters.droppedOverflow == 1 && buffer.held == .milliseconds(160))
        #expect(buffer.pull(now: t(0)) == .frame(1), "frame 0 was the oldest: dropped")
    }

    /// Found by FuzzStreamReceive: the delay went back to 60 ms with 200 ms held, and the buffer
    /// kept the 200 ms (over its 160 ms limit) until another packet came.
    @Test func goingBackToTheBaseDelayDropsWhatIsOverTheLowerLimit() {
        var buffer = AudioJitterBuffer<Int>()
        var sequence: UInt16 = 0
        var now = 0
        func feed(_ n: Int) {
            for _ in 0..<n { buffer.insert(sequence: sequence, payload: Int(sequence), now: t(now)); sequence &+= 1 }
        }
        for _ in 0..<2 {  // two underruns: the raised 120 ms target
            feed(3)
            for _ in 0..<4 { _ = buffer.pull(now: t(now)); now += 20 }
            now += 1000
        }
        #expect(buffer.target == .milliseconds(120))
        feed(11)  // 220 ms: the raised target and its margin
        #expect(buffer.held == .milliseconds(220))
        now += 31_000  // no pull for 31 s, then one: the clean period has passed
        _ = buffer.pull(now: t(now))
        #expect(buffer.target == .milliseconds(60))
        #expect(buffer.held <= .milliseconds(160), "held \(buffer.held) after going back to 60 ms")
    }

    @Test func sequenceNumbersWrap() {
        var buffer = AudioJitterBuffer<Int>()
        for s: UInt16 in [65534, 65535, 0, 1] { buffer.insert(sequence: s, payload: Int(s), now: t(0)) }
        var played: [Int] = []
        for tick in 0..<4 { if case .frame(let p) = buffer.pull(now: t(tick * 20)) { played.append(p) } }
        #expect(played == [65534, 65535, 0, 1])
    }

    @Test func videoReorderHoldsAHoleThenSkipsIt() {
        var buffer = VideoReorderBuffer<Int>(wait: .milliseconds(100))
        buffer.insert(sequence: 100, 100, now: t(0))
        #expect(buffer.release(now: t(0)) == [100])
        buffer.insert(sequence: 102, 102, now: t(5))
        buffer.insert(sequence: 103, 103, now: t(6))
        #expect(buffer.release(now: t(10)).isEmpty, "101 is missing: hold")
        buffer.insert(sequence: 101, 101, now: t(30))
        #expect(buffer.release(now: t(30)) == [101, 102, 103])
        #expect(buffer.counters.reordered == 1)
        buffer.insert(sequence: 105, 105, now: t(40))
        #expect(buffer.release(now: t(100)).isEmpty)
        #expect(buffer.nextDeadline == t(140))
        #expect(buffer.release(now: t(140)) == [105], "104 given up after 100 ms")
        #expect(buffer.counters.skipped == 1)
        buffer.insert(sequence: 104, 104, now: t(150))
        #expect(buffer.counters.droppedLate == 1 && buffer.release(now: t(150)).isEmpty)
    }
}
