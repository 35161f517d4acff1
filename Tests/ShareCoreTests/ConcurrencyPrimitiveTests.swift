import Foundation
import ShareCore
import Synchronization
import Testing

@Suite struct ResumeOnceTests {
    enum Failure: Error { case abandoned, late }

    @Test func theFirstResumeWinsAndLaterOnesSaySo() async throws {
        let value = try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce<Int>(continuation, ifAbandoned: Failure.abandoned)
            #expect(once.resume(returning: 1))
            #expect(!once.resume(returning: 2))
            #expect(!once.resume(throwing: Failure.late))
        }
        #expect(value == 1)
    }

    @Test func releasedUnresumedItFails() async {
        await #expect(throws: Failure.abandoned) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                _ = ResumeOnce(continuation, ifAbandoned: Failure.abandoned)
            }
        }
    }

    /// Threads race to resume; exactly one of them does.
    @Test func racingResumersResumeOnce() async throws {
        for _ in 0..<50 {
            let winners = Atomic<Int>(0)
            let value = try await withCheckedThrowingContinuation { continuation in
                let once = ResumeOnce<Int>(continuation, ifAbandoned: Failure.abandoned)
                for i in 0..<4 {
                    Thread { if once.resume(returning: i) { winners.add(1, ordering: .relaxed) } }.start()
                }
            }
            #expect((0..<4).contains(value))
            // The losers may still be running: wait for all four to have tried.
            let deadline = Date().addingTimeInterval(5)
            while winners.load(ordering: .relaxed) == 0 && Date() < deadline { usleep(100) }
            #expect(winners.load(ordering: .relaxed) == 1)
        }
    }
}

@Suite struct HandOffTests {
    /// Not Sendable: confined to whichever thread owns it.
    final class Encoder {
        var frames = 0
        func encode() { frames += 1 }
    }

    @Test func theValueComesOutOnce() {
        let handOff = HandOff(Encoder())
        #expect(handOff.take() != nil)
        #expect(handOff.take() == nil)
    }

    @Test func movesAValueToTheThreadThatOwnsIt() async {
        let handOff = HandOff(Encoder())
        let encoded = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            let thread = Thread {
                guard let encoder = handOff.take() else { return done.resume(returning: -1) }
                for _ in 0..<3 { encoder.encode() }
                done.resume(returning: encoder.frames)
            }
            thread.start()
        }
        #expect(encoded == 3)
        #expect(handOff.take() == nil, "the giver cannot take it back")
    }
}
