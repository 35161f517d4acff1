// libFuzzer target for the room server's door to Janus (`JanusProxyRule` in RoomProtocol): any text
// a participant sends is either passed on, and then it is a JSON object of an allowed kind that names
// no other room, or refused with a Janus-shaped error (403) under the message's transaction.
import Foundation
import RoomProtocol
import ScriptInput

let rule = JanusProxyRule(room: 4242, maxBytes: 4096)
let kinds: Set<String> = ["create", "attach", "message", "trickle", "keepalive", "detach", "hangup", "destroy"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: ScriptInput(start, count).bytes, as: UTF8.self)
    switch rule.judge(text) {
    case .forward:
        let object = JSONValue.parse(text)?.objectValue
        check(object != nil && text.utf8.count <= 4096, "passed on what is not a JSON object within the limit")
        let kind = object?["janus"]?.stringValue ?? ""
        check(kinds.contains(kind), "passed on the kind '\(kind)'")
        if kind == "attach" { check(object?["plugin"] == .string("janus.plugin.videoroom"), "attached another plugin") }
        if kind == "message" {
            let body = object?["body"]?.objectValue
            check(body?["request"]?.stringValue != nil, "passed on a message without a request")
            if let room = body?["room"] { check(room == .int(4242) || room == .double(4242), "reached room \(room)") }
        }
    case .refuse(let reason, let answer):
        check(!reason.isEmpty, "a refusal without a reason")
        let error = JSONValue.parse(answer)?.objectValue
        check(error?["janus"] == .string("error"), "a refusal that is not a Janus error: \(answer)")
        check(error?["error"]?["code"] == .int(403), "a refusal without code 403: \(answer)")
        let transaction = JSONValue.parse(text)?["transaction"]?.stringValue
        if let transaction, text.utf8.count <= 4096 {
            check(error?["transaction"] == .string(transaction), "a refusal under another transaction")
        }
    }
    return 0
}
