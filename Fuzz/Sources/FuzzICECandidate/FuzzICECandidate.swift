// libFuzzer target for remote ICE candidate lines: ICECandidateLine (Sources/CallsClient/ICE,
// linked here as source), the check a line passes before libnice parses it, and SDPWire's
// ICECandidate, which reads and writes candidates in descriptions. A line the check accepts comes
// back trimmed, as "candidate:…", with nothing in it that would end or cut a C string or an SDP
// line, and is accepted again unchanged; one SDPWire also reads is written back by SDPWire in a
// form the check accepts.
import SDPWire
import ScriptInput

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let line = String(decoding: ScriptInput(start, count).bytes, as: UTF8.self)
    let accepted: String
    do { accepted = try ICECandidateLine.attribute(line) } catch {
        check(error.description.contains("candidate"), "a refusal that does not say what it refused: \(error)")
        return 0
    }
    check(accepted.hasPrefix("candidate:"), "an accepted line that is not \"candidate:…\": \(accepted)")
    check(
        !accepted.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
        "an accepted line holds a control character (NUL ends it for libnice, CR/LF for SDP): \(accepted.debugDescription)"
    )
    check((try? ICECandidateLine.attribute(accepted)) == accepted, "checking an accepted line again changed it")
    if let parsed = try? ICECandidate(parsing: accepted) {
        let written = parsed.candidateString
        do { _ = try ICECandidateLine.attribute(written) } catch {
            fatalError(
                "SDPWire wrote \(written.debugDescription) for \(accepted.debugDescription); the check refuses it: \(error)"
            )
        }
    }
    return 0
}
