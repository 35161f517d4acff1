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
}
