import Foundation
import GLibLoop
import Synchronization
import Testing

@Suite struct GLibLoopTests {
    @Test func runsWorkOnItsOwnThreadInOrder() throws {
        let loop = GLibLoop(name: "test-loop")
        defer { loop.stop() }
        #expect(!loop.isLoopThread)
        let seen = Mutex<[Int]>([])
        for i in 0..<100 { loop.invoke { seen.withLock { $0.append(i) } } }
        let onLoop = try loop.invokeAndWait { loop.isLoopThread }
        #expect(onLoop)
        #expect(seen.withLock { $0 } == Array(0..<100), "invoke keeps submission order")
    }

    @Test func invokeAndWaitPassesResultsAndErrors() throws {
        struct Boom: Error {}
        let loop = GLibLoop()
        defer { loop.stop() }
        #expect(try loop.invokeAndWait { 6 * 7 } == 42)
        #expect(throws: Boom.self) { try loop.invokeAndWait { () throws -> Int in throw Boom() } }
    }

    @Test func stopJoinsAndLaterWorkIsRefused() throws {
        let loop = GLibLoop()
        loop.stop()
        loop.stop()
        #expect(throws: GLibLoopError.self) { try loop.invokeAndWait { 1 } }
    }
}
