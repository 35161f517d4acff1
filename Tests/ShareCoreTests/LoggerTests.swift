import ShareCore
import Testing

@Suite struct LoggerTests {
    @Test func levelsFilterAndMetadataMerges() {
        let capture = LogCapture()
        var logger = capture.logger(label: "calls", level: .info)
        logger.metadata["call.id"] = "7"
        logger.debug("dropped")
        logger.info("kept", ["ice.pair": "host-host"])
        let child = logger.child("ice", metadata: ["ice.role": "controlling"])
        child.warning("consent lost")
        #expect(capture.messages == ["kept", "consent lost"])
        #expect(capture.all[0].metadata == ["call.id": "7", "ice.pair": "host-host"])
        #expect(capture.all[1].label == "calls.ice")
        #expect(capture.all[1].metadata == ["call.id": "7", "ice.role": "controlling"])
    }

    /// Under systemd's journal each line carries its syslog priority; elsewhere nothing.
    @Test func journalLinesCarryTheirPriority() {
        #expect(Logger.Level.allCases.map(Logger.journalPrefix) == ["<7>", "<7>", "<6>", "<5>", "<4>", "<3>"])
        #expect(Logger.isJournalStream("8:12345", device: 8, inode: 12345))
        #expect(!Logger.isJournalStream("8:12345", device: 8, inode: 999), "the variable, but another stream")
        #expect(!Logger.isJournalStream(nil, device: 8, inode: 12345))
        #expect(!Logger.isJournalStream("garbage", device: 8, inode: 12345))
    }
}
