import Foundation
import ShareCore
import Testing

@Suite struct LockedTests {
    /// A plain read-modify-write inside the lock, from eight threads at once: no increment is lost.
    /// (Done with two separate locks it loses some; the count is what shows the exclusion.)
    @Test func bodiesNeverOverlap() {
        final class Plain: @unchecked Sendable { var count = 0 }  // reached only under `lock`
        let lock = Locked(0)
        let plain = Plain()
        let inside = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<20_000 {
                lock.withLock { value in
                    value += 1
                    plain.count += 1
                }
            }
        }
        #expect(lock.withLock { $0 } == 160_000)
        #expect(plain.count == 160_000)
        // Never two threads in a body at once.
        let most = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<2_000 {
                lock.withLock { _ in
                    let now = inside.withLock {
                        $0 += 1; return $0
                    }
                    most.withLock { $0 = max($0, now) }
                    inside.withLock { $0 -= 1 }
                }
            }
        }
        #expect(most.withLock { $0 } == 1)
    }

    @Test func errorsAndResultsPassThrough() {
        struct Refused: Error {}
        let lock = Locked([1, 2, 3])
        #expect(throws: Refused.self) { try lock.withLock { (_: inout [Int]) throws(Refused) in throw Refused() } }
        #expect(lock.withLock { $0.removeLast() } == 3)
        #expect(lock.withLock { $0 } == [1, 2])  // the lock was released by the throw
    }

    /// The value is released with the lock, and not before.
    @Test func theValueLivesAsLongAsTheLock() {
        final class Tracked: Sendable {
            let gone: Locked<Bool>
            init(_ gone: Locked<Bool>) { self.gone = gone }
            deinit { gone.withLock { $0 = true } }
        }
        let gone = Locked(false)
        var lock: Locked<Tracked>? = Locked(Tracked(gone))
        #expect(!gone.withLock { $0 })
        _ = lock?.withLock { $0 }
        #expect(!gone.withLock { $0 })
        lock = nil
        #expect(gone.withLock { $0 })
    }
}
