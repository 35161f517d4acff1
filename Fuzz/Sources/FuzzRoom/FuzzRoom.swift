// libFuzzer target for the room server's message handling (the RoomProtocol module's `Room`, the
// rules the server runs without its sockets). Each input is a script of frames,
// one per line, sent by three connections in turn (two joined, one not) on a clock that moves
// 37 ms a frame. Whatever arrives: nothing crashes, everything the room sends is JSON, a refused
// message is answered to its sender alone, the room never holds more than its limit, and every
// frame it sends fits the limit a client reads with (RoomSocket.maxIncoming, the same figure as
// RoomLimits.maxFrameBytes; here both are taken as the room's limit, made small so that the
// fuzzer can reach it: 2048 bytes, four participants with the longest names still fit in a
// welcome). A frame the room accepted at the limit must not grow past it when relayed.
import RoomProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let frames = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    var limits = RoomLimits(grace: .seconds(2))
    limits.maxParticipants = 4
    limits.maxQueued = 8
    limits.maxFrameBytes = 2048
    var room = Room(name: "fuzz", limits: limits, secrets: .seeded(1))
    var now = ContinuousClock.Instant.now
    for connection in 1...3 { room.connected(connection, now: now) }
    _ = room.received(#"{"type":"join","name":"Ana"}"#, from: 1, now: now)
    _ = room.received(#"{"type":"join","name":"Bo"}"#, from: 2, now: now)
    for (index, frame) in frames.enumerated() {
        now += .milliseconds(37)
        let sender = 1 + index % 3
        let refused: Bool
        if case .failure = ClientMessage.parse(frame) { refused = true } else { refused = false }
        let answer = room.received(frame, from: sender, now: now)
        var others: [RoomOutput] = []
        if index % 7 == 6 { others += room.disconnected(1 + (index / 7) % 3, now: now) }
        if index % 5 == 4 { others += room.tick(now: now) }
        for output in answer + others {
            guard case .send(_, let text) = output else { continue }
            precondition(JSONValue.parse(text) != nil, "the room sent text that is not JSON: \(text)")
            if text.utf8.count > limits.maxFrameBytes {
                // Named by kind: a relayed message (signal, share, media) and the room's own
                // (welcome, joined, error) outgrow the limit for different reasons.
                let type = JSONValue.parse(text)?.objectValue?["type"]?.stringValue ?? "?"
                let relayed = ["signal", "share", "media"].contains(type)
                fatalError(
                    "the room sent \(relayed ? "a relayed" : "its own") \(type) frame of \(text.utf8.count) bytes, "
                        + "over the client's limit of \(limits.maxFrameBytes)")
            }
        }
        if refused {
            for case .send(let target, _) in answer {
                precondition(target == sender, "a refused message reached another connection")
            }
        }
        precondition(room.participants.count <= limits.maxParticipants, "the room holds more than its limit")
    }
    return 0
}
