import CallsClient
import Testing

@testable import sharectl

@Suite struct ControlInputTests {
    typealias Parsed = Result<ControlInput.Command, ControlInput.Complaint>?

    @Test(
        arguments: [
            ("stop", .success(.stop)),
            ("quit", .success(.stop)),
            ("keyframe", .success(.keyframe)),
            ("mute", .success(.mute(true))),
            ("unmute", .success(.mute(false))),
            ("policy motion", .success(.policy("motion"))),
            ("fault capture-stall", .success(.fault(.captureStall))),
            (
                "fault decoder-wedge-sticky Ada Lovelace",
                .success(.fault(.decoderWedge(name: "Ada Lovelace", sticky: true)))
            ),
            ("", nil),
            ("   ", nil)
        ] as [(String, Parsed)])
    func commandsAreRead(line: String, expected: Parsed) {
        #expect(ControlInput.parse(line) == expected)
    }

    /// A line that is no command is answered with what the commands are, escaped for the terminal.
    @Test func otherLinesAreComplaints() throws {
        guard case .failure(let complaint) = ControlInput.parse("stop now\u{1B}[2J") else {
            Issue.record("not a complaint")
            return
        }
        #expect(complaint.text.hasPrefix("unknown command 'stop now"))
        #expect(!complaint.text.contains("\u{1B}"))
        #expect(complaint.text.contains("keyframe"))
        guard case .failure(let fault) = ControlInput.parse("fault melt") else {
            Issue.record("not a complaint")
            return
        }
        #expect(fault.text.contains("unknown fault 'melt'"))
    }
}
