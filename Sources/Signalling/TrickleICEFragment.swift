// RFC 8840 §4.4 / §9.1 SDP fragment ("application/trickle-ice-sdpfrag"), as WHIP sends it in a
// PATCH for trickle and ICE restart (RFC 9725 §4.4) and reads it back from an ICE restart answer:
//
//   a=ice-ufrag:EsAw                      session level: the credentials these candidates belong to
//   a=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1
//   m=audio 9 RTP/AVP 0                   one media description per m= section that gathers
//   a=mid:0                               (with max-bundle, only the bundle tag's)
//   a=candidate:1387637174 1 udp 2122260223 192.0.2.1 61764 typ host
//   a=end-of-candidates                   when gathering is done
//
// Lines end in CRLF; a parser also takes bare LF.
import Foundation
import RoomProtocol

/// An SDP fragment for trickle ICE and ICE restarts.
public struct TrickleICEFragment: Hashable, Sendable {
    public struct Media: Hashable, Sendable {
        /// The `a=mid` value of the m= section these candidates belong to.
        public var mid: String
        /// The m= line's value. RFC 8840 §4.4 allows a placeholder when the real one is not at hand;
        /// WHIP endpoints ignore it (RFC 9725 copies the offer's).
        public var mediaLine: String
        /// Candidate attribute values, without the "a=candidate:" prefix:
        /// "1387637174 1 udp 2122260223 192.0.2.1 61764 typ host".
        public var candidates: [String]
        public var endOfCandidates: Bool

        public static let placeholderMediaLine = "audio 9 RTP/AVP 0"

        /// `candidates` may be given as "a=candidate:…", "candidate:…" or the bare value.
        public init(
            mid: String, mediaLine: String = Media.placeholderMediaLine, candidates: [String] = [],
            endOfCandidates: Bool = false
        ) {
            self.mid = mid
            self.mediaLine = mediaLine
            self.candidates = candidates.map(Media.bareCandidate)
            self.endOfCandidates = endOfCandidates
        }

        static func bareCandidate(_ text: String) -> String {
            // By scalars: a combining mark after "candidate:" would make ":" part of another character.
            var value = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines)).unicodeScalars
            if value.starts(with: "a=".unicodeScalars) { value = value.dropFirst(2) }
            if value.starts(with: "candidate:".unicodeScalars) { value = value.dropFirst(10) }
            return String(value)
        }
    }

    public var iceUfrag: String?
    public var icePwd: String?
    public var media: [Media]

    public init(iceUfrag: String?, icePwd: String?, media: [Media]) {
        self.iceUfrag = iceUfrag
        self.icePwd = icePwd
        self.media = media
    }

    /// The fragment as sent, CRLF line ends. Throws when a value would break the format (line
    /// breaks, characters ICE forbids in credentials, a candidate that is not one).
    public func serialized() throws(TrickleICEFragmentError) -> String {
        try validate()
        var lines: [String] = []
        if let iceUfrag { lines.append("a=ice-ufrag:\(iceUfrag)") }
        if let icePwd { lines.append("a=ice-pwd:\(icePwd)") }
        for section in media {
            lines.append("m=\(section.mediaLine)")
            lines.append("a=mid:\(section.mid)")
            lines += section.candidates.map { "a=candidate:\($0)" }
            if section.endOfCandidates { lines.append("a=end-of-candidates") }
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Reads a fragment. Credentials may be at session or media level (the first of each counts);
    /// attributes other than the ones above are ignored.
    public static func parse(_ text: String) throws(TrickleICEFragmentError) -> TrickleICEFragment {
        var fragment = TrickleICEFragment(iceUfrag: nil, icePwd: nil, media: [])
        var current: (mediaLine: String, mid: String?, candidates: [String], end: Bool)?
        func close() throws(TrickleICEFragmentError) {
            guard let section = current else { return }
            guard let mid = section.mid else { throw .mediaWithoutMid(section.mediaLine) }
            fragment.media.append(
                Media(
                    mid: mid, mediaLine: section.mediaLine, candidates: section.candidates,
                    endOfCandidates: section.end))
            current = nil
        }
        let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (number, rawLine) in lines.enumerated() {
            let line = String(rawLine)
            guard line.count >= 2, line.dropFirst().first == "=", line.first!.isLetter else {
                throw .notSDPLine(number: number + 1, line: String(line.prefix(80)))
            }
            let value = String(line.dropFirst(2))
            if line.hasPrefix("m=") {
                try close()
                current = (value, nil, [], false)
            } else if !line.hasPrefix("a=") {
                continue
            } else if let ufrag = value.attributeValue("ice-ufrag") {
                if fragment.iceUfrag == nil { fragment.iceUfrag = ufrag }
            } else if let pwd = value.attributeValue("ice-pwd") {
                if fragment.icePwd == nil { fragment.icePwd = pwd }
            } else if let mid = value.attributeValue("mid") {
                guard current != nil else { throw .outsideMedia("a=mid:\(mid)") }
                current?.mid = mid
            } else if let candidate = value.attributeValue("candidate") {
                guard current != nil else { throw .outsideMedia("a=candidate:\(candidate)") }
                current?.candidates.append(candidate)
            } else if value == "end-of-candidates" {
                current?.end = true  // at session level it applies to every section; nothing to keep
            }
        }
        try close()
        try fragment.validate()
        return fragment
    }

    func validate() throws(TrickleICEFragmentError) {
        if let iceUfrag { try Self.checkCredential(iceUfrag, name: "ice-ufrag", minimum: 4) }
        if let icePwd { try Self.checkCredential(icePwd, name: "ice-pwd", minimum: 22) }
        for section in media {
            for (name, value) in [("mid", section.mid), ("m=", section.mediaLine)] {
                if value.isEmpty || value.contains(where: { $0.isNewline || $0 == "\0" }) {
                    throw .invalidValue(name: name, value: value)
                }
            }
            for candidate in section.candidates {
                // RFC 8839 §5.1: foundation component-id transport priority address port "typ" type …
                let fields = candidate.split(separator: " ")
                if fields.count < 8 || fields[6] != "typ" || UInt32(fields[1]) == nil || UInt16(fields[5]) == nil
                    || candidate.contains(where: { $0.isNewline || $0 == "\0" })
                {
                    throw .invalidCandidate(String(candidate.prefix(120)))
                }
            }
        }
    }

    /// RFC 8839 §5.4: ice-char = ALPHA / DIGIT / "+" / "/", ufrag 4–256, pwd 22–256 characters.
    private static func checkCredential(_ value: String, name: String, minimum: Int) throws(TrickleICEFragmentError) {
        let allowed = value.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "+" || $0 == "/"
        }
        guard allowed, (minimum...256).contains(value.count) else { throw .invalidValue(name: name, value: value) }
    }
}

public enum TrickleICEFragmentError: Error, Hashable, Sendable, CustomStringConvertible {
    case notSDPLine(number: Int, line: String)
    case outsideMedia(String)
    case mediaWithoutMid(String)
    case invalidValue(name: String, value: String)
    case invalidCandidate(String)

    public var description: String {
        switch self {
        case .notSDPLine(let number, let line): return "sdpfrag: line \(number) is not an SDP line: \"\(line)\""
        case .outsideMedia(let line): return "sdpfrag: \"\(line)\" comes before any m= line"
        case .mediaWithoutMid(let line): return "sdpfrag: the section \"m=\(line)\" has no a=mid"
        case .invalidValue(let name, let value): return "sdpfrag: \(name) \"\(value.prefix(80))\" is not valid"
        case .invalidCandidate(let value): return "sdpfrag: \"candidate:\(value)\" is not an ICE candidate"
        }
    }
}

extension String {
    /// "ice-ufrag:abcd".attributeValue("ice-ufrag") == "abcd", for `a=` line values.
    fileprivate func attributeValue(_ name: String) -> String? {
        guard hasPrefix(name), dropFirst(name.count).first == ":" else { return nil }
        return String(dropFirst(name.count + 1))
    }
}
