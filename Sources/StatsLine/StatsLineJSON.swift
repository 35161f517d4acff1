import Foundation

/// A stats line that could not be written as JSON, naming the field: `video.fpsSent is nan`.
public struct StatsLineError: Error, Equatable, CustomStringConvertible {
    /// The dotted path of the field (`peers.0.video.fps`).
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "stats line: \(field) is \(reason), which JSON cannot hold" }
}

/// Any command's line, told apart by its fields: a call line has `peers` and `signalling`, a
/// Janus watcher's has `publisher`.
public enum AnyStatsLine: Sendable, Equatable, Decodable {
    case share(ShareStatsLine)
    case call(CallStatsLine)
    case janusWatch(JanusWatchStatsLine)

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: Key.self)
        if keys.contains(Key(stringValue: "peers")) || keys.contains(Key(stringValue: "signalling")) {
            self = .call(try CallStatsLine(from: decoder))
        } else if keys.contains(Key(stringValue: "publisher")) {
            self = .janusWatch(try JanusWatchStatsLine(from: decoder))
        } else {
            self = .share(try ShareStatsLine(from: decoder))
        }
    }
}

/// How lines are written and read: one JSON object, keys sorted, no spaces, no newline.
public enum StatsLineJSON {
    /// The line, or an error naming the first field JSON cannot hold (NaN or an infinity).
    public static func encode(_ line: some Encodable) throws(StatsLineError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return String(decoding: try encoder.encode(line), as: UTF8.self)
        } catch let EncodingError.invalidValue(value, context) {
            throw StatsLineError(
                field: context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
                    .joined(separator: "."), reason: "\(value)")
        } catch {
            throw StatsLineError(field: "the line", reason: "not encodable (\(error))")
        }
    }

    /// The line always: a field JSON cannot hold is written as the nearest number it can — NaN as
    /// 0, an infinity as the largest double of its sign — and `clamped` names the first such
    /// field, for the writer to report.
    public static func encodeClamping(_ line: some Encodable) -> (json: String, clamped: StatsLineError?) {
        do {
            return (try encode(line), nil)
        } catch {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: Marker.positiveInfinity, negativeInfinity: Marker.negativeInfinity, nan: Marker.nan)
            guard let data = try? encoder.encode(line) else { return ("", error) }
            let json = String(decoding: data, as: UTF8.self)
                .replacingOccurrences(of: "\"\(Marker.nan)\"", with: "0")
                .replacingOccurrences(of: "\"\(Marker.positiveInfinity)\"", with: "\(Double.greatestFiniteMagnitude)")
                .replacingOccurrences(of: "\"\(Marker.negativeInfinity)\"", with: "\(-Double.greatestFiniteMagnitude)")
            return (json, error)
        }
    }

    /// Written in place of a non-finite number for a moment, then replaced: DEL is no character
    /// a name or a reason in a stats line holds.
    private enum Marker {
        static let nan = "\u{7F}nan"
        static let positiveInfinity = "\u{7F}+inf"
        static let negativeInfinity = "\u{7F}-inf"
    }

    /// One line of either command, as this build writes it.
    public static func decode(_ line: String) throws -> AnyStatsLine {
        try JSONDecoder().decode(AnyStatsLine.self, from: Data(line.utf8))
    }

    /// One line of a command whose kind is known.
    public static func decode<Line: Decodable>(_ type: Line.Type, from line: some DataProtocol) throws -> Line {
        try JSONDecoder().decode(type, from: Data(line))
    }
}
