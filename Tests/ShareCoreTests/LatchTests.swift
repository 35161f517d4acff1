import ShareCore
import Testing

@Suite struct LatchTests {
    @Test func anOpenLatchLetsEveryWaiterGoAtOnce() async {
        let latch = Latch()
        latch.open()
        #expect(await latch.wait(upTo: .seconds(60)))
        #expect(latch.isOpen)
    }

    @Test func openingReleasesTheWaitersThatWereWaiting() async {
        let latch = Latch()
        async let first = latch.wait(upTo: .seconds(600))
        async let second = latch.wait(upTo: .seconds(600))
        // Both may or may not be registered yet: either way each returns true once opened.
        latch.open()
        let results = await [first, second]
        #expect(results == [true, true])
    }

    @Test func aWaitWhoseTimeIsUpSaysSoAndALaterOpenIsHarmless() async {
        let latch = Latch()
        #expect(await latch.wait(upTo: .milliseconds(20)) == false)
        latch.open()
        latch.open()
        #expect(await latch.wait(upTo: .zero))
    }

    /// `wait()` has no deadline: it returns only once the gate opens, before or after it began.
    @Test func anEndlessWaitReturnsOnceOpened() async {
        let latch = Latch()
        let passed = Locked(false)
        async let waiting: Void = {
            await latch.wait()
            passed.withLock { $0 = true }
        }()
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!passed.withLock { $0 })
        latch.open()
        await waiting
        #expect(passed.withLock { $0 })
        await latch.wait()  // already open: at once
    }
}
