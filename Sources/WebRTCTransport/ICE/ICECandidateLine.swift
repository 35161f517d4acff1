/// Checks a remote `candidate:` line (RFC 8839 §5.1) before libnice parses it, so a bad line gets
/// an error that says what is wrong (libnice only says "no") and never reaches libnice's parser
/// with fields it would dereference as NULL.
///
///     candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type>
///               [raddr <address> rport <port>] [tcptype <active|passive|so>] [<name> <value>]...
enum ICECandidateLine {
    /// The attribute without "a=" and surrounding whitespace, once it looks well formed.
    ///
    /// The line is read as Unicode scalars, not characters: a combining mark after a space or the
    /// colon would otherwise join them into one character, hiding the separator from the check
    /// while libnice and SDP readers (which see bytes) still split there.
    static func attribute(_ line: String) throws(ICEError) -> String {
        var text = Substring(line).unicodeScalars
        while let first = text.first, first.properties.isWhitespace { text.removeFirst() }
        while let last = text.last, last.properties.isWhitespace { text.removeLast() }
        if text.starts(with: "a=".unicodeScalars) { text = text.dropFirst(2) }
        func fail(_ reason: String) -> ICEError { .malformedCandidate(line: line, reason: reason) }
        guard text.starts(with: "candidate:".unicodeScalars) else {
            throw fail("it does not start with \"candidate:\"")
        }
        // libnice takes the line as a C string (a NUL would cut it short of what was checked here),
        // and a line break inside would make it more than one SDP line.
        guard !text.contains(where: { $0.properties.generalCategory == .control }) else {
            throw fail("it holds control characters")
        }
        let fields = text.dropFirst("candidate:".unicodeScalars.count)
            .split(separator: " ", omittingEmptySubsequences: false)
            .map { Substring($0) }
        guard !fields.contains(where: \.isEmpty) else { throw fail("fields must be separated by single spaces") }
        guard fields.count >= 8 else {
            throw fail(
                "expected at least 8 fields (foundation component transport priority address port typ type), got \(fields.count)"
            )
        }
        // RFC 8839 §5.1: foundation = 1*32ice-char, ice-char = ALPHA / DIGIT / "+" / "/".
        guard fields[0].unicodeScalars.count <= 32,
            fields[0].unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "+" || $0 == "/")
            })
        else {
            throw fail("foundation \"\(fields[0])\" is not 1 to 32 letters, digits, + or /")
        }
        guard UInt32(fields[1]).map({ $0 >= 1 && $0 <= 256 }) == true else {
            throw fail("component \"\(fields[1])\" is not a number from 1 to 256")
        }
        let transport = fields[2].lowercased()
        guard transport == "udp" || transport == "tcp" else {
            throw fail("transport \"\(fields[2])\" is neither UDP nor TCP")
        }
        guard UInt32(fields[3]) != nil else { throw fail("priority \"\(fields[3])\" is not a 32-bit number") }
        let address = String(fields[4])
        if address.lowercased().hasSuffix(".local") {
            throw fail(
                "the address is an mDNS name (\(address)); libnice needs an IP address (the peer hides its host addresses)"
            )
        }
        guard ICELocalAddresses.isNumeric(address) else { throw fail("address \"\(address)\" is not an IP address") }
        guard UInt16(fields[5]) != nil else { throw fail("port \"\(fields[5])\" is not a number from 0 to 65535") }
        guard fields[6] == "typ" else { throw fail("expected \"typ\" after the port, got \"\(fields[6])\"") }
        guard ["host", "srflx", "prflx", "relay"].contains(fields[7]) else {
            throw fail("candidate type \"\(fields[7])\" is not host, srflx, prflx or relay")
        }
        let extensions = fields.dropFirst(8)
        guard extensions.count % 2 == 0 else {
            throw fail("the attributes after the type must come in name/value pairs")
        }
        var tcptype: Substring?
        var index = extensions.startIndex
        while index < extensions.endIndex {
            let name = extensions[index], value = extensions[index + 1]
            switch name {
            case "raddr":
                guard ICELocalAddresses.isNumeric(String(value)) else {
                    throw fail("raddr \"\(value)\" is not an IP address")
                }
            case "rport": guard UInt16(value) != nil else { throw fail("rport \"\(value)\" is not a port number") }
            case "tcptype": tcptype = value
            default: break
            }
            index += 2
        }
        if transport == "tcp" {
            guard let tcptype, ["active", "passive", "so"].contains(tcptype) else {
                throw fail("a TCP candidate needs \"tcptype active|passive|so\"")
            }
        }
        return String(String.UnicodeScalarView(text))
    }
}
