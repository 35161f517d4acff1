// libFuzzer target for the client's side of the room protocol (RoomMessage in
// Sources/CallsClient/Call, linked here as source): a text frame from the server either is
// refused with a reason, or reads as a message that writes out as JSON which reads back as the
// same message and writes out the same text again.
import Foundation
import RoomProtocol
import ScriptInput

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: ScriptInput(start, count).bytes, as: UTF8.self)
    let message: RoomMessage
    do { message = try RoomMessage.parse(text) } catch {
        check(error.description.hasPrefix("room: "), "a refusal that does not say where it comes from: \(error)")
        return 0
    }
    let written = message.text
    let again: RoomMessage
    do { again = try RoomMessage.parse(written) } catch {
        fatalError("a message the client read does not read back once written: \(error)\n\(written)")
    }
    check(again == message, "read → write → read changed the message:\n\(text)\n\(written)")
    check(again.text == written, "writing a message is not stable")
    return 0
}
