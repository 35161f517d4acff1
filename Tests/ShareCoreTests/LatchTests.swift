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
}
