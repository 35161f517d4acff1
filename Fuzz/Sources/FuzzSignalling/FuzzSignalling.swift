// libFuzzer target for what a WHIP endpoint sends back as text (Sources/CallsClient/Signalling,
// linked here as source). The first byte picks the reader, the rest is the text:
//   0  a trickle-ICE SDP fragment: what parses serializes, and parses back to the same fragment;
//   1  Link field values, one a line: every server found is well formed, and written back as a
//      Link field it is found again, the same;
//   2  a Retry-After value: never a negative wait; an HTTP-date read is written as IMF-fixdate
//      and read back to the same instant;
//   3  a Location (first line) resolved against a base (second line): the result is an http(s)
//      URL and resolving it again, against either URL, gives it unchanged;
//   4  a message from Janus: read or refused, never a crash; what is read keeps its kind, and a
//      plugin error is one only with a code; and a join built from the text's lines (room, pin,
//      display) reads back as exactly those values.
import Foundation
import RoomProtocol
import ScriptInput

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = ScriptInput(start, count)
    let mode = input.byte() % 5
    let text = String(decoding: input.rest(), as: UTF8.self)
    switch mode {
    case 0: fragment(text)
    case 1: links(text)
    case 2: retryAfter(text)
    case 3: location(text)
    default: janus(text)
    }
    return 0
}

private func fragment(_ text: String) {
    guard let fragment = try? TrickleICEFragment.parse(text) else { return }
    let written: String
    do { written = try fragment.serialized() } catch {
        fatalError("a fragment that parsed does not serialize: \(error)")
    }
    let again: TrickleICEFragment
    do { again = try TrickleICEFragment.parse(written) } catch {
        fatalError("a serialized fragment does not parse: \(error)\n\(written)")
    }
    check(again == fragment, "parse → serialize → parse changed the fragment:\n\(written)")
    check((try? again.serialized()) == written, "fragment serialization is not stable")
}

private func links(_ text: String) {
    let fields = text.split(whereSeparator: \.isNewline).map(String.init)
    let (servers, skipped) = WHIPICEServer.parse(linkFields: fields)
    for server in servers {
        check(!server.host.isEmpty && server.port > 0, "an ICE server without host or port: \(server.uri)")
        check(
            !server.host.contains { $0 == "/" || $0 == "@" || $0.isWhitespace },
            "a host with / @ or space: \(server.host)")
        check(
            server.scheme == .stun || (server.username != nil && server.credential != nil),
            "a TURN server without credentials: \(server.uri)")
        check(server.scheme != .stun || server.transport == nil, "a stun: URI with a transport: \(server.uri)")
        var other = server
        other.credential = (server.credential ?? "") + "x"
        check(other.description == server.description, "an ICE server's description shows its credential")
    }
    check(
        servers.count + skipped.count <= text.unicodeScalars.filter { $0 == "<" }.count,
        "more ICE servers than link targets")
    guard !servers.isEmpty else { return }
    // Written back as one field, with every value quoted, the servers come out the same.
    let field = servers.map { server in
        var link = "<\(server.uri)>; rel=\"ice-server\""
        if let username = server.username { link += "; username=\(quoted(username))" }
        if let credential = server.credential {
            link += "; credential=\(quoted(credential)); credential-type=\"password\""
        }
        return link
    }.joined(separator: ", ")
    let again = WHIPICEServer.parse(linkFields: [field])
    check(again.servers == servers && again.skipped.isEmpty, "ICE servers changed when written back: \(field)")
}

private func quoted(_ value: String) -> String {
    var text = "\""
    for scalar in value.unicodeScalars {
        if scalar == "\"" || scalar == "\\" { text += "\\" }
        text.unicodeScalars.append(scalar)
    }
    return text + "\""
}

private func retryAfter(_ text: String) {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    if let delay = RetryAfter.delay(text, now: now) {
        check(delay >= .zero, "a negative Retry-After wait for \"\(text)\"")
    }
    guard let seconds = RetryAfter.httpDate(text.trimmingCharacters(in: .whitespaces)) else { return }
    guard let written = imfFixdate(seconds) else { return }
    check(RetryAfter.httpDate(written) == seconds, "HTTP-date \"\(text)\" written as \"\(written)\" reads differently")
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` for years 0...9999 (civil-from-days, proleptic Gregorian).
private func imfFixdate(_ seconds: Double) -> String? {
    let total = Int(seconds)
    let days = Int((Double(total) / 86_400).rounded(.down))
    let secondOfDay = total - days * 86_400
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    guard (0...9999).contains(year) else { return nil }
    let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let weekday = weekdays[((days % 7) + 7) % 7]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let yearText = String(repeating: "0", count: 4 - String(year).count) + String(year)
    return "\(weekday), \(two(day)) \(months[month - 1]) \(yearText) "
        + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
}

private func location(_ text: String) {
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let location = lines[0]
    let base = lines.count > 1 ? lines[1] : "http://127.0.0.1:8080/whip/endpoint"
    guard let resolved = HTTPURL.resolve(location, against: base) else { return }
    check(
        HTTPURL.scheme(of: resolved) != nil,
        "\"\(location)\" against \"\(base)\" resolved to \"\(resolved)\", not http(s)")
    check(HTTPURL.resolve(resolved, against: base) == resolved, "resolving \"\(resolved)\" again changed it")
    check(HTTPURL.resolve(resolved, against: resolved) == resolved, "\"\(resolved)\" against itself changed it")
}

private func janus(_ text: String) {
    if let reply = try? JanusReply.parse(text) {
        check(!reply.kind.isEmpty, "a Janus message read without a kind")
        check(
            reply.pluginError == nil || reply.pluginData?["error_code"] != nil,
            "a plugin error without an error_code")
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard lines.count >= 3, let room = JanusRoom(argument: lines[0]) else { return }
    let written = JanusRequest.join(room: room, pin: lines[1], display: lines[2])
        .text(transaction: "t", session: 1, handle: 2)
    guard let body = JSONValue.parse(written)?["body"] else {
        fatalError("a join request is not JSON: \(written)")
    }
    check(body["pin"] == .string(lines[1]) && body["display"] == .string(lines[2]), "a join's pin or display changed")
    switch room {
    case .number(let n): check(body["room"] == .int(n), "a numeric room changed")
    case .name(let s): check(body["room"] == .string(s), "a string room changed")
    }
}
